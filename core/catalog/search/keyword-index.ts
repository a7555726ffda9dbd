/**
 * The keyword half of search, in process: an inverted index over the stored full-text documents (api_search.document,
 * the weighted tsvector search-index.ts builds). Postgres still parses the query (the `english` configuration's
 * lexemes and the typo corrections, search-text.ts); matching and ranking run here, so a query costs the length of
 * its words' posting lists, not a scan of every matching row's document (500 ms at 100,000 listings when Postgres
 * ranked every match).
 *
 * The order is the one the Postgres query had (docs/decisions.md, "Callable first"): listings holding more of the
 * query's words first, then `ts_rank` (normalization 0), then the id. ts_rank over an OR query is a sum of per-word
 * terms that depend only on the document (tsrank.c, calc_rank_or), divided by the query's size: each posting stores
 * its word's term, so ranking is a sum over postings. `rankOfDocument` is tested against Postgres's own ts_rank.
 *
 * Postings refer to document numbers of the per-process copy (search-copy.ts); a changed listing gets a new number
 * and its old postings are skipped as dead until the copy is rebuilt.
 */

/** ts_rank's default weights of D, C, B, A. */
const WEIGHTS: Record<string, number> = { D: 0.1, C: 0.2, B: 0.4, A: 1 };
/** sum(1/i^2), the limit calc_rank_or divides by. */
const PI2_6 = 1.64493406685;

/** A lexeme's term in ts_rank from its positions' weights, in position order (a lexeme without positions: one D). */
export function termScore(weights: readonly number[]): number {
  if (!weights.length) return (0.1 + 0.1 - 0.1) / PI2_6;
  let resj = 0;
  let wjm = -1;
  let jm = 0;
  for (let j = 0; j < weights.length; j++) {
    const w = weights[j]!;
    resj += w / ((j + 1) * (j + 1));
    if (w > wjm) {
      wjm = w;
      jm = j;
    }
  }
  return (wjm + resj - wjm / ((jm + 1) * (jm + 1))) / PI2_6;
}

/**
 * The lexemes of a tsvector's text form (`'forecast':6,7B 'it''s':2A`) with their ts_rank terms. Lexemes are
 * quoted, with quotes and backslashes doubled; a position is a number and an optional weight letter (D when absent).
 */
export function parseTsvector(text: string): { lexeme: string; score: number }[] {
  const out: { lexeme: string; score: number }[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (i < n && text[i] !== "'") i++;
    if (i >= n) break;
    i++;
    let lexeme = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) return out;
      if (c === "'" && text[i + 1] === "'") {
        lexeme += "'";
        i += 2;
      } else if (c === '\\' && i + 1 < n) {
        lexeme += text[i + 1];
        i += 2;
      } else if (c === "'") {
        i++;
        break;
      } else {
        lexeme += c;
        i++;
      }
    }
    const weights: number[] = [];
    if (text[i] === ':') {
      i++;
      while (i < n && text[i] !== ' ') {
        while (i < n && text[i]! >= '0' && text[i]! <= '9') i++;
        const letter = text[i];
        if (letter === 'A' || letter === 'B' || letter === 'C' || letter === 'D') {
          weights.push(WEIGHTS[letter]!);
          i++;
        } else weights.push(WEIGHTS.D!);
        if (text[i] === ',') i++;
      }
    }
    out.push({ lexeme, score: termScore(weights) });
  }
  return out;
}

/** One lexeme's postings: document numbers and the lexeme's ts_rank term in each, growing by doubling. */
class Postings {
  docs = new Int32Array(4);
  scores = new Float32Array(4);
  length = 0;

  push(doc: number, score: number): void {
    if (this.length === this.docs.length) {
      const docs = new Int32Array(this.length * 2);
      docs.set(this.docs);
      this.docs = docs;
      const scores = new Float32Array(this.length * 2);
      scores.set(this.scores);
      this.scores = scores;
    }
    this.docs[this.length] = doc;
    this.scores[this.length++] = score;
  }

  bytes(): number {
    return this.docs.byteLength + this.scores.byteLength;
  }

  /** Drop the room left by doubling (after a load: half the postings' memory at worst). */
  trim(): void {
    if (this.length === this.docs.length) return;
    this.docs = this.docs.slice(0, this.length);
    this.scores = this.scores.slice(0, this.length);
  }
}

/** A keyword match: how many of the query's words the document holds, and its summed ts_rank terms. */
export interface KeywordHit {
  doc: number;
  held: number;
  rank: number;
}

export class KeywordIndex {
  private readonly postings = new Map<string, Postings>();

  /** Index a live document's lexemes (its tsvector's text form). */
  add(doc: number, tsvectorText: string): void {
    for (const { lexeme, score } of parseTsvector(tsvectorText)) {
      let p = this.postings.get(lexeme);
      if (!p) this.postings.set(lexeme, (p = new Postings()));
      p.push(doc, score);
    }
  }

  /** Live documents holding this lexeme (`live[doc]` is 1 for a live document). */
  frequency(lexeme: string, live: Uint8Array): number {
    const p = this.postings.get(lexeme);
    if (!p) return 0;
    let n = 0;
    for (let i = 0; i < p.length; i++) n += live[p.docs[i]!]!;
    return n;
  }

  /**
   * Every live document (per `keep`) holding any of these lexemes, best first: more of the words held, then the
   * summed ts_rank terms, then `tieBreak` (the listing ids' order).
   */
  match(
    lexemes: readonly string[],
    keep: (doc: number) => boolean,
    tieBreak: (a: number, b: number) => number,
  ): KeywordHit[] {
    const held = new Map<number, KeywordHit>();
    for (const lexeme of new Set(lexemes)) {
      const p = this.postings.get(lexeme);
      if (!p) continue;
      const { docs, scores, length } = p;
      for (let i = 0; i < length; i++) {
        const doc = docs[i]!;
        const hit = held.get(doc);
        if (hit) {
          hit.held++;
          hit.rank += scores[i]!;
        } else if (keep(doc)) held.set(doc, { doc, held: 1, rank: scores[i]! });
      }
    }
    const hits = [...held.values()];
    // Ranks are compared at float precision, as Postgres's real ts_rank was.
    for (const h of hits) h.rank = Math.fround(h.rank);
    hits.sort((a, b) => b.held - a.held || b.rank - a.rank || tieBreak(a.doc, b.doc));
    return hits;
  }

  /** Release the room postings keep for growth (after the copy's load; a later add grows that list again). */
  trim(): void {
    for (const p of this.postings.values()) p.trim();
  }

  /** Bytes held by the postings' arrays. */
  bytes(): number {
    let n = 0;
    for (const p of this.postings.values()) n += p.bytes();
    return n;
  }
}
