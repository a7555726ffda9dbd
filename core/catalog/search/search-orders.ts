/**
 * Browsing and sorting over the per-process copy (search.service.ts): each sort's order of every live listing is
 * computed once and kept until the copy or the scores change (a browse at 100,000 listings walks a prepared order
 * instead of sorting the catalog per request), and the order of a query's results by a sort key.
 *
 * Every order is the same total order search has always used: the sort's key descending, then relevance (queries
 * only), then the svc_score prior, then the listing id.
 */
import type { Documents } from './search-copy.js';
import type { SearchSort } from './search.schemas.js';
import { NEUTRAL_SCORES, type Scores, type ScoresSnapshot } from './scores.js';

/** The sort's key of a document (descending); `relevance` has none (0). */
export function keyOf(
  sort: SearchSort,
  docs: Documents,
  scores: ReadonlyMap<string, Scores>,
  prices: ReadonlyMap<string, { min: number }> | null,
): (doc: number) => number {
  const s = (d: number) => scores.get(docs.ids[d]!) ?? NEUTRAL_SCORES;
  switch (sort) {
    case 'relevance':
      return () => 0;
    case 'svc_score':
      return (d) => s(d).svc_score;
    case 'price':
      // Cheapest first; listings without endpoints (no price) last.
      return (d) => -(prices?.get(docs.ids[d]!)?.min ?? Number.MAX_SAFE_INTEGER);
    case 'new':
      return (d) => docs.publishedAt[d]!;
    case 'calls':
      return (d) => s(d).calls;
    case 'gmv':
      return (d) => s(d).gmv_cents;
    case 'reliability':
      return (d) => s(d).reliability;
    case 'value':
      return (d) => s(d).value;
    case 'momentum':
      return (d) => s(d).momentum;
  }
}

/** Documents ordered by key, relevance, prior (each descending), then id. */
export function orderDocs(
  list: ArrayLike<number>,
  docs: Documents,
  key: (d: number) => number,
  rel: (d: number) => number,
  prior: (d: number) => number,
): Int32Array {
  const n = list.length;
  const k = new Float64Array(n);
  const r = new Float64Array(n);
  const p = new Float64Array(n);
  const idx = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const d = list[i]!;
    k[i] = key(d);
    r[i] = rel(d);
    p[i] = prior(d);
    idx[i] = i;
  }
  const ids = docs.ids;
  idx.sort((a, b) => k[b]! - k[a]! || r[b]! - r[a]! || p[b]! - p[a]! || cmp(ids[list[a]!]!, ids[list[b]!]!));
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = list[idx[i]!]!;
  return out;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Each browse sort's order of every live document, kept while the copy's and the scores' versions stay. */
export class BrowseOrders {
  private readonly cache = new Map<SearchSort, { docs: Documents; copy: number; scores: number; order: Int32Array }>();

  order(
    sort: Exclude<SearchSort, 'price'>,
    docs: Documents,
    copyVersion: number,
    snapshot: ScoresSnapshot,
  ): Int32Array {
    const hit = this.cache.get(sort);
    if (hit && hit.docs === docs && hit.copy === copyVersion && hit.scores === snapshot.version) return hit.order;
    const live = Int32Array.from(docs.liveDocs());
    const prior = (d: number) => (snapshot.scores.get(docs.ids[d]!) ?? NEUTRAL_SCORES).svc_score;
    const order = orderDocs(live, docs, keyOf(sort, docs, snapshot.scores, null), () => 0, prior);
    this.cache.set(sort, { docs, copy: copyVersion, scores: snapshot.version, order });
    return order;
  }
}
