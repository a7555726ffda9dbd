/**
 * Derived enrichment (issue 33): what the hand-written directory enrichment gives a listing (example questions and
 * synonyms: the words people use when they ask for what it does), derived for a listing that has none (a provider's
 * new API, a directory entry without its intents) from what every listing has. This file: the words.
 *
 * Learned from the enriched directory in general, never per entry:
 * - per category, the intent words its entries' questions and synonyms use more than the catalog does:
 *   P(w | c) · log(P(w | c) / P(w)), counted only when at least `minSupport` entries of the category use w;
 * - per word of a listing's own text (name, summary, description, category name), the intent words of the entries
 *   whose text holds it (the same score over those entries; words of at least `minSource` entries only).
 * A listing's derived words are its category's and its own words' associates, summed, best first, without the words
 * it already has (deriveScores). derived-model.ts adds the vectors (projection, question clusters) and the Deriver
 * the index uses; the shipped model (derived-model.json) is built from the whole directory by
 * `npm run search:derive`; the cold part of `npm run eval:search` learns from one half of the directory and scores
 * the other.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { tokenize } from './embedder.js';

/** What the learner reads of an enriched listing. */
export interface TrainingEntry {
  /** Name, summary, description and category name: the listing's own words. */
  text: string;
  /** The text the index embeds as the listing's main vector (name, summary, description); `text` when absent. */
  main?: string;
  /** Category slug (or null). */
  category: string | null;
  /** Its hand-written intents (questions) and synonyms. */
  intents: string[];
  synonyms?: string[];
}

/** Per key, intent words (surface forms) with their weights, best first. */
type Associations = Record<string, [string, number][]>;

/**
 * A linear map from a listing's text vector to the mean vector of its intents (ridge regression over the training
 * entries), for one embedder: it moves what a listing says about itself toward how people ask for it.
 */
export interface Projection {
  embedder: string;
  dims: number;
  /** Row-major dims × dims. */
  w: number[];
}

export interface DerivationModel {
  format: 1;
  /** Training entries the model was learned from. */
  entries: number;
  categories: Associations;
  /** Keyed by a word's light stem (stemOf). */
  words: Associations;
  projection?: Projection;
  /** Pseudo-intents: the words of clusters of the training questions, per category (intent-clusters.ts). */
  clusters?: { category: string | null; words: string[] }[];
}

export const LEARN = {
  /** Entries of a category (or holding a word) that must share an intent word for it to count. */
  minSupport: 2,
  /** Entries whose text must hold a word for its associates to be learned. */
  minSource: 3,
  /** Intent words kept per category and per word. */
  perCategory: 40,
  perWord: 15,
};

/** How a listing's derived enrichment is composed (measured with the cold part of npm run eval:search). */
export const DERIVE = {
  /** How much the category's words count beside the listing's own words' associates. */
  categoryWeight: 1,
  /**
   * Derived words per listing (field D of the full-text document), and how many join its semantic intents. 16 in
   * field D measured the same cold paraphrase on the eval (0.32 against 0.30-0.33) and a faster keyword query at
   * 100,000 listings (p95 65 ms against 180), but ranked a test's cold listing 35th instead of 9th: the cost of the
   * words at scale is next (docs/decisions.md, "Search at 100,000 listings").
   */
  words: 48,
  semanticWords: 16,
  /** Pseudo-intents per listing (question clusters nearest it), and the bonus of its own category's clusters. */
  clusters: 6,
  clusterBonus: 0.1,
  /** Whether its vectors get the projected one. */
  project: true,
  /** The same for a listing whose endpoints already say what it does (their summaries are its intents). */
  withCalls: { words: 0, clusters: 0, project: true },
  /** Ridge penalty of the projection. */
  ridge: 1,
};

/**
 * Words that carry no meaning of their own in a listing or an intent: function words, question words and the
 * vocabulary every API listing shares.
 */
const STOP = new Set(
  (
    'a about above after again all also am an and any are as at be because been before being below between both but ' +
    'by can could did do does doing down during each few for from further had has have having he her here hers him ' +
    'his how i if in into is it its itself just let like me more most my myself no nor not now of off on once only ' +
    'or other our ours out over own same she should so some such than that the their theirs them then there these ' +
    'they this those through to too under until up very was we were what when where which while who whom why will ' +
    'with would you your yours yourself get gets got give show tell find need want know see make use using used ' +
    'one two many much every via per etc e g eg ie s t www http https com org net io ' +
    'api apis rest restful json xml endpoint endpoints service services data free public open simple ' +
    'provide provides providing access information info list lists based app apps application applications ' +
    'online web website site platform tool tools project projects library'
  ).split(' '),
);

/** A light stem for counting: plural and simple verb endings off ("forecasts" → forecast, "cities" → city). */
export function stemOf(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (/(ss|us|is|ous)$/.test(word)) return word;
  if (/(ches|shes|xes|zes|sses)$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s')) return word.slice(0, -1);
  return word;
}

/** A text's meaningful words as stem → first surface form. */
export function contentWords(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const t of tokenize(text)) {
    if (t.length < 3 || STOP.has(t) || /^\d+$/.test(t)) continue;
    const s = stemOf(t);
    if (!STOP.has(s) && !out.has(s)) out.set(s, t);
  }
  return out;
}

/** The best `keep` of `scores` (ties by word), with their surface forms. */
function top(scores: Map<string, number>, surface: Map<string, string>, keep: number): [string, number][] {
  return [...scores.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, keep)
    .map(([s, v]) => [surface.get(s) ?? s, Math.round(v * 10_000) / 10_000]);
}

/** P(w | group) · log(P(w | group) / P(w)) for the intent words seen at least minSupport times in the group. */
function lift(counts: Map<string, number>, size: number, df: Map<string, number>, n: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const [w, c] of counts) {
    if (c < LEARN.minSupport) continue;
    const p = c / size;
    const prior = (df.get(w) ?? 0) / n;
    if (p > prior) out.set(w, p * Math.log(p / prior));
  }
  return out;
}

const bump = (m: Map<string, number>, k: string, by = 1) => m.set(k, (m.get(k) ?? 0) + by);

/** Learns the category and word associations of a set of enriched listings (deterministic for a given set). */
export function learnDerivation(entries: readonly TrainingEntry[]): DerivationModel {
  const df = new Map<string, number>();
  const surface = new Map<string, Map<string, number>>();
  const byCategory = new Map<string, { size: number; counts: Map<string, number> }>();
  const bySource = new Map<string, { size: number; counts: Map<string, number> }>();
  let n = 0;
  for (const e of entries) {
    if (!e.intents.length) continue;
    n++;
    const intent = new Map<string, string>();
    for (const text of [...e.intents, ...(e.synonyms ?? [])])
      for (const [s, w] of contentWords(text)) if (!intent.has(s)) intent.set(s, w);
    for (const [s, w] of intent) {
      bump(df, s);
      const forms = surface.get(s) ?? new Map<string, number>();
      surface.set(s, bump(forms, w));
    }
    const own = contentWords(e.text);
    const groups = [
      ...(e.category ? [[byCategory, e.category] as const] : []),
      ...[...own.keys()].map((s) => [bySource, s] as const),
    ];
    for (const [table, key] of groups) {
      const g = table.get(key) ?? { size: 0, counts: new Map<string, number>() };
      table.set(key, g);
      g.size++;
      for (const s of intent.keys()) if (table === byCategory || s !== key) bump(g.counts, s);
    }
  }
  // Each intent stem's most used surface form ("forecast" rather than "forecasts").
  const form = new Map(
    [...surface].map(([s, forms]) => [s, [...forms].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0]]),
  );
  const categories: Associations = {};
  for (const [c, g] of [...byCategory].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const scored = lift(g.counts, g.size, df, n);
    if (scored.size) categories[c] = top(scored, form, LEARN.perCategory);
  }
  const words: Associations = {};
  for (const [s, g] of [...bySource].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (g.size < LEARN.minSource) continue;
    const scored = lift(g.counts, g.size, df, n);
    if (scored.size) words[s] = top(scored, form, LEARN.perWord);
  }
  return { format: 1, entries: n, categories, words };
}

/** What the deriver reads of a listing: its own texts (name, summary, description, endpoints) and category slug. */
export interface DerivationInput {
  texts: string[];
  category: string | null;
}

/**
 * The intent words derived for a listing, best first: its category's words and its own words' associates, weighted,
 * without the words it already has.
 */
export function deriveWords(model: DerivationModel, listing: DerivationInput): string[] {
  return deriveScores(model, listing)
    .slice(0, DERIVE.words)
    .map(([w]) => w);
}

/** Every candidate intent word of a listing with its association score, best first. */
export function deriveScores(model: DerivationModel, listing: DerivationInput): [string, number][] {
  const own = contentWords(listing.texts.join(' '));
  const scores = new Map<string, number>();
  const cat = listing.category ? model.categories[listing.category] : undefined;
  for (const [w, v] of cat ?? []) bump(scores, w, DERIVE.categoryWeight * v);
  const known = [...own.keys()].map((s) => model.words[s]).filter((a) => a !== undefined);
  for (const assoc of known) for (const [w, v] of assoc) bump(scores, w, v / Math.sqrt(known.length));
  return [...scores.entries()]
    .filter(([w]) => !own.has(stemOf(w)))
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}

const MODEL_FILE = path.join(import.meta.dirname, 'derived-model.json');
let shipped: DerivationModel | null | undefined;

/** The model shipped with the project (learned from the whole enriched directory); null when the file is missing. */
export function shippedDerivation(): DerivationModel | null {
  if (shipped === undefined) {
    try {
      shipped = JSON.parse(readFileSync(MODEL_FILE, 'utf8')) as DerivationModel;
    } catch {
      shipped = null;
    }
  }
  return shipped;
}
