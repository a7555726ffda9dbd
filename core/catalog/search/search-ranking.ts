/**
 * Search's ranking parameters (RANKING) and the in-process pieces of ranking and ordering: the per-process copy's
 * entry, the dot product of the semantic scan, the semantic list's cut and each sort's key.
 */
import type { SearchSort } from './search.schemas.js';
import type { Scores } from './scores.js';

/** A live listing in the per-process copy. */
export interface Entry {
  id: string;
  category: string | null;
  source: string;
  publishedAt: number;
  vec: Float32Array | null;
}

/** Tuned on test/fixtures/search/dev-set.json with npm run eval:search (figures in docs/decisions.md). */
export const RANKING = {
  rrfK: 10,
  weights: { fts: 1, trigram: 0.25, semantic: 1.5 },
  /**
   * Callable prior: the fused score of a listing callable through the gateway (a provider's) is multiplied by 1 + this.
   * 1 was the knee on the callable part of npm run eval:search (docs/decisions.md, "Callable first").
   */
  callable: 1,
  /** The typo list (corrected words) counts only when full-text search found fewer candidates than this. */
  trigramWhenFewer: 20,
  /** Query lexemes at least this long and unknown to the index are corrected, at most maxWords of them, each to its
   * fixesPerWord nearest indexed words (pg_trgm similarity above its threshold, 0.3 by default). */
  typo: { minLength: 4, maxWords: 4, fixesPerWord: 3 },
  /** Semantic matches below this cosine are not results on their own. */
  semanticFloor: 0.3,
  /** How many of the nearest listings by meaning add to fused scores (more when more are results by meaning). */
  semanticDepth: 200,
  /** Results by meaning alone: the `atLeast` nearest, then those within `share` of the best score (semanticMatches). */
  semanticMatch: { share: 0.75, atLeast: 10 },
  /** How far the best example question's cosine lifts the combined one (0: ignore examples, 1: take the best). */
  intentLift: 0.75,
  /**
   * The same for a provider's listing, whose intents are its own examples and its endpoints' summaries: what its calls
   * do, not questions generated for a directory entry. Taking the best puts a listing that says "weather forecast"
   * only in an endpoint where that endpoint's match earns it (docs/decisions.md, "Callable first").
   */
  providerIntentLift: 1,
  /** Pseudo-relevance feedback: the first `top` results' vectors added to the query's with this total weight. */
  feedback: { top: 5, weight: 0.5 },
  /** A lexeme in more than this share of documents is left out of the full-text query. */
  commonShare: 0.08,
  /** Prior: at most this share of a top-ranked fusion score, from svc_score. */
  prior: 0.02,
};

/** Ids of the first RANKING.semanticDepth (at least `results`) of a semantic list: those that add to fused scores. */
export function nearest(list: { id: string }[], results: number): string[] {
  return list.slice(0, Math.max(RANKING.semanticDepth, results)).map((s) => s.id);
}

/** Dot product of `q` with the vector stored at `off` in `v` (no subarray allocation on the hot loop). */
export function dotAt(q: Float32Array, v: Float32Array, off: number): number {
  let s = 0;
  for (let i = 0; i < q.length; i++) s += q[i]! * v[off + i]!;
  return s;
}

/** Descending sort key of a sort; `relevance` sorts only by the fused score (0 here). */
export function sortKey(
  sort: SearchSort,
  scores: Map<string, Scores>,
  entries: Map<string, Entry>,
  prices: Map<string, { min: number }> | null,
): (id: string) => number {
  const s = (id: string) => scores.get(id)!;
  switch (sort) {
    case 'relevance':
      return () => 0;
    case 'svc_score':
      return (id) => s(id).svc_score;
    case 'price':
      // Cheapest first; listings without endpoints (no price) last.
      return (id) => -(prices?.get(id)?.min ?? Number.MAX_SAFE_INTEGER);
    case 'new':
      return (id) => entries.get(id)?.publishedAt ?? 0;
    case 'calls':
      return (id) => s(id).calls;
    case 'gmv':
      return (id) => s(id).gmv_cents;
    case 'reliability':
      return (id) => s(id).reliability;
    case 'value':
      return (id) => s(id).value;
    case 'momentum':
      return (id) => s(id).momentum;
  }
}
