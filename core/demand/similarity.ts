/**
 * Near-duplicate detection for API requests (pure; docs/decisions.md). A query is normalised (lower case, accents
 * and punctuation dropped, words that say nothing about the API removed, a plural `s` trimmed), then two queries are
 * the same request when their token sets overlap (Jaccard ≥ 0.6) or their normalised strings share trigrams
 * (pg_trgm-style similarity ≥ 0.6): "Paris weather forecast API" and "weather forecasts for paris" merge.
 */
const STOPWORDS = new Set(
  (
    'a an the and or of for to in on at by with from into about any some that this which what who how is are be ' +
    'i me my we our you your it its need want looking find get give api apis endpoint endpoints service services ' +
    'please would like can could should there data'
  ).split(' '),
);

export const DUPLICATE_THRESHOLD = 0.6;
/** Share of a request's tokens a listing must contain to fulfil it. */
export const MATCH_THRESHOLD = 0.6;

function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/** The words of a text, normalised and stemmed (stopwords kept out), in order, without repeats. */
export function tokenize(text: string): string[] {
  const words = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0 && !STOPWORDS.has(w))
    .map(stem);
  return [...new Set(words)];
}

/** The canonical form of a query: its tokens, sorted (word order does not make a different request). */
export function normalizeQuery(text: string): string {
  return [...tokenize(text)].sort().join(' ');
}

function trigrams(s: string): Set<string> {
  const out = new Set<string>();
  for (const word of s.split(' ').filter(Boolean)) {
    const padded = `  ${word} `;
    for (let i = 0; i + 3 <= padded.length; i++) out.add(padded.slice(i, i + 3));
  }
  return out;
}

function jaccard<T>(a: Set<T>, b: Set<T>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

/** Similarity of two normalised queries, 0–1: the larger of token Jaccard and trigram similarity. */
export function querySimilarity(a: string, b: string): number {
  const ta = new Set(a.split(' ').filter(Boolean));
  const tb = new Set(b.split(' ').filter(Boolean));
  return Math.max(jaccard(ta, tb), jaccard(trigrams(a), trigrams(b)));
}

/** Share of the request's tokens found in a listing's tokens (0 when the request has none). */
export function coverage(requestTokens: readonly string[], listingTokens: ReadonlySet<string>): number {
  if (requestTokens.length === 0) return 0;
  return requestTokens.filter((t) => listingTokens.has(t)).length / requestTokens.length;
}
