/** Search's ranking parameters (search.service.ts, keyword-index.ts, vector-index.ts through search-copy.ts). */

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
