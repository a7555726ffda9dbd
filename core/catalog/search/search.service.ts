/**
 * GET /v1/search: hybrid ranking of live listings over the per-process copy (search-copy.ts).
 *
 * - Keyword: the query's lexemes (Postgres's `english` configuration, search-text.ts) matched in the copy's inverted
 *   index (keyword-index.ts), ranked by how many of them a listing holds, then ts_rank; plus a typo list: query words
 *   the index does not know (search_lexicon) corrected to their nearest indexed words by pg_trgm similarity.
 * - Semantic: the query's vector against the listings' int8 vectors (vector-index.ts): exact below 25,000 vectors and
 *   for filtered pools of up to 5,000 listings, through an inverted file above.
 * - Fusion: weighted reciprocal rank fusion of the three lists; a callable listing's score doubled (callable first);
 *   a small svc_score prior as tie breaker.
 * - Results and the total: every keyword match (and corrected-word match) plus the matches by meaning
 *   (semanticMatches, at most the vector index's candidates). The total is exact up to SEARCH_WINDOW, then a lower
 *   bound (`total_exact: false`); pages reach SEARCH_WINDOW (docs/decisions.md, "Search at 100,000 listings").
 *
 * Browsing (no q) walks each sort's prepared order of the copy (search-orders.ts); display fields are read for the
 * page only.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../logger.js';
import { normalize, type Embedder } from './embedder.js';
import type { SearchIndex } from './search-index.js';
import { SEARCH_WINDOW, type SearchQuery, type SearchSort } from './search.schemas.js';
import { NEUTRAL_SCORES, type Scores, type ScoresReader } from './scores.js';
import { readItems } from './search-items.js';
import type { SearchItem } from './search.schemas.js';
import { RANKING } from './search-ranking.js';
import { lexemesOf } from './search-text.js';
import { listingPrices, priceFilter, pricedBy, type ListingPrices } from './search-prices.js';
import { SearchCopy, type Documents } from './search-copy.js';
import { BrowseOrders, keyOf, orderDocs } from './search-orders.js';
import type { VectorHit } from './vector-index.js';

export type { SearchItem } from './search.schemas.js';
export { RANKING } from './search-ranking.js';
export { tsOr } from './search-text.js';

export type Ranker = 'keyword' | 'semantic' | 'hybrid';

export interface SearchResult {
  items: SearchItem[];
  /** Exact up to SEARCH_WINDOW; beyond it SEARCH_WINDOW with `total_exact: false` (a lower bound). */
  total: number;
  total_exact: boolean;
  limit: number;
  offset: number;
  sort: SearchSort;
}

/** The totals rule: exact up to SEARCH_WINDOW, then SEARCH_WINDOW as a lower bound. */
export const totalOf = (count: number) =>
  count <= SEARCH_WINDOW ? { total: count, total_exact: true } : { total: SEARCH_WINDOW, total_exact: false };

/** Below this many listings a filtered pool is scored exactly; above it through the vector index. */
const EXACT_POOL = 5_000;

type Filters = Pick<SearchQuery, 'category' | 'source'>;

export class SearchService {
  private readonly copy: SearchCopy;
  private readonly orders = new BrowseOrders();

  constructor(
    private readonly deps: {
      orm: MikroORM;
      embedder: Embedder;
      index: SearchIndex;
      scores: ScoresReader;
      logger: Logger;
      /** With a read replica: resolves once it has replayed what the primary had committed (core/db/replica.ts). */
      replicaCaughtUp?: () => Promise<unknown>;
    },
  ) {
    this.copy = new SearchCopy(deps);
  }

  /** Bring the per-process copy up to date (search-copy.ts; forced: reflect every write committed before the call). */
  async sync(force = false): Promise<void> {
    if (force) await this.deps.replicaCaughtUp?.();
    return this.copy.sync(force);
  }

  /** Resolves when the copy's vector index, if one is being built, is ready (the bench's build time). */
  vectorIndexReady(): Promise<void> {
    return this.copy.docs.vectors.ready();
  }

  /** Bytes the per-process copy holds (the bench's memory row). */
  copyBytes(): number {
    return this.copy.docs.bytes();
  }

  /** Whether a document passes the category and source filters (a category unknown to the copy keeps none). */
  private keeper(docs: Documents, f: Filters): (d: number) => boolean {
    const code = f.category === undefined ? -1 : docs.categories.indexOf(f.category);
    const provider = f.source === undefined ? -1 : f.source === 'provider' ? 1 : 0;
    if (f.category !== undefined && code < 0) return () => false;
    return (d) =>
      docs.live[d] === 1 && (code < 0 || docs.category[d] === code) && (provider < 0 || docs.provider[d] === provider);
  }

  /**
   * The semantic list: exact over a filtered pool of at most EXACT_POOL listings, else the vector index's nearest.
   * `within`: score only these documents (the feedback pass over the first pass's candidates when those came from
   * the index: the moved query is near the first, and a second probe cost as much again).
   */
  private semantic(docs: Documents, qv: Float32Array, f: Filters, within?: number[]): VectorHit[] {
    if (!qv.some((x) => x !== 0)) return [];
    if (within) return docs.vectors.exact(qv, within, RANKING.semanticFloor);
    const keep = this.keeper(docs, f);
    if (f.category !== undefined || f.source !== undefined) {
      const pool: number[] = [];
      for (const d of docs.liveDocs()) if (keep(d)) pool.push(d);
      if (pool.length <= EXACT_POOL || !docs.vectors.indexed)
        return docs.vectors.exact(qv, pool, RANKING.semanticFloor);
      const share = pool.length / Math.max(1, docs.liveCount);
      return docs.vectors.nearest(qv, keep, RANKING.semanticFloor, () => pool, share);
    }
    return docs.vectors.nearest(qv, keep, RANKING.semanticFloor, () => docs.liveDocs());
  }

  /**
   * The listings of a semantic list that are results by meaning alone: the `atLeast` nearest, then those within
   * `share` of the best score. The rest of the list still adds its small part to a keyword match's fused score, but is
   * no result on its own: word-vector cosines of unrelated texts reach 0.5, so above the floor alone most of the
   * catalog matched any query ("qr code": 6,691 of 10,000).
   */
  private semanticMatches(list: VectorHit[]): number[] {
    const { share, atLeast } = RANKING.semanticMatch;
    const cut = (list[0]?.score ?? 0) * share;
    const end = list.findIndex((x, i) => i >= atLeast && x.score < cut);
    return (end < 0 ? list : list.slice(0, end)).map((x) => x.doc);
  }

  private async keyword(docs: Documents, q: string, f: Filters): Promise<{ fts: number[]; trigram: number[] }> {
    const lexemes = await lexemesOf(this.deps.orm.em.fork(), q);
    // The query's lexemes OR-ed, without those in more than RANKING.commonShare of the live listings ("get", "data",
    // "free"): they match thousands of rows and carry no meaning. When every lexeme is that common, all are kept.
    const common = Math.max(20, RANKING.commonShare * docs.liveCount);
    const rare = lexemes.filter((l) => docs.keyword.frequency(l.lex, docs.live) <= common);
    const main = (rare.length ? rare : lexemes).map((l) => l.lex);
    // Typos and partial words: lexemes the index does not know, replaced by their nearest indexed words.
    const fixes = [...new Set(lexemes.flatMap((l) => l.fixes ?? []))];
    const keep = this.keeper(docs, f);
    const byId = (a: number, b: number) => (docs.ids[a]! < docs.ids[b]! ? -1 : docs.ids[a]! > docs.ids[b]! ? 1 : 0);
    const fts = docs.keyword.match(main, keep, byId).map((h) => h.doc);
    // When the full-text list already holds plenty, corrections add little (a quarter weight) and mostly noise.
    const trigram =
      fts.length < RANKING.trigramWhenFewer && fixes.length
        ? docs.keyword.match(fixes, keep, byId).map((h) => h.doc)
        : [];
    return { fts, trigram };
  }

  /** Relevance-ordered ids with their fused score (0..1), for one ranker. Used by search and by the evaluation. */
  async rank(q: string, f: Filters = {}, ranker: Ranker = 'hybrid'): Promise<Map<string, number>> {
    await this.sync();
    const docs = this.copy.docs;
    const fused = await this.rankDocs(docs, q, f, ranker);
    return new Map([...fused].map(([d, s]) => [docs.ids[d]!, s]));
  }

  private async rankDocs(docs: Documents, q: string, f: Filters, ranker: Ranker): Promise<Map<number, number>> {
    const { weights } = RANKING;
    const lists: [number[], number][] = [];
    // The database parses the query's words while this process scores vectors.
    const keyword = ranker !== 'semantic' ? this.keyword(docs, q, f) : null;
    keyword?.catch(() => undefined);
    const qv = ranker !== 'keyword' ? (await this.deps.embedder.embed([q]))[0] : undefined;
    let byMeaning: number[] = [];
    let candidates: number[] | undefined;
    if (qv) {
      const sem = this.semantic(docs, qv, f);
      if (docs.vectors.indexed && sem.length >= RANKING.semanticDepth) candidates = sem.map((h) => h.doc);
      byMeaning = this.semanticMatches(sem);
      lists.push([nearestDocs(sem, byMeaning.length), weights.semantic]);
    }
    let byWords: number[] = [];
    if (keyword) {
      const kw = await keyword;
      lists.push([kw.fts, weights.fts], [kw.trigram, weights.trigram]);
      byWords = [...kw.fts, ...kw.trigram];
    }
    let fused = fuse(lists);
    if (ranker === 'hybrid' && qv && RANKING.feedback.top > 0 && fused.size) {
      // Pseudo-relevance feedback in vector space: the query moved toward its first results' vectors, so a listing
      // found through one precise intent brings its kind along (one more pass over the vectors).
      const top = [...fused.entries()].sort((a, b) => b[1] - a[1]).slice(0, RANKING.feedback.top);
      const moved = Float32Array.from(qv);
      for (const [d] of top) {
        const v = docs.vectors.vectorOf(d);
        if (!v) continue;
        for (let i = 0; i < moved.length; i++) moved[i]! += (RANKING.feedback.weight / top.length) * v[i]!;
      }
      const sem = this.semantic(docs, normalize(moved), f, candidates);
      byMeaning = this.semanticMatches(sem);
      lists[0] = [nearestDocs(sem, byMeaning.length), weights.semantic];
      fused = fuse(lists);
    }
    const results = new Set([...byWords, ...byMeaning]);
    for (const d of fused.keys()) if (!results.has(d)) fused.delete(d);
    // Callable first: a listing people can call through the gateway with the key they hold is worth more to them than
    // a directory entry (a pointer to sign up elsewhere) of the same relevance. Multiplied, so a weak match stays weak.
    for (const [d, score] of fused) if (docs.provider[d] === 1) fused.set(d, score * (1 + RANKING.callable));
    return fused;
  }

  async search(asked: SearchQuery): Promise<SearchResult> {
    // `callable` is the people's word for the source (issue 22): true a provider's listing, false a directory entry.
    const wanted = asked.callable === undefined ? undefined : asked.callable === 'true' ? 'provider' : 'directory';
    const sort: SearchSort = asked.sort ?? (asked.q ? 'relevance' : 'svc_score');
    const page = { limit: asked.limit, offset: asked.offset, sort };
    if (wanted && asked.source && asked.source !== wanted) return { items: [], total: 0, total_exact: true, ...page };
    const query: SearchQuery = wanted ? { ...asked, source: wanted } : asked;
    await this.sync();
    const docs = this.copy.docs;
    const [snapshot, prices] = await Promise.all([
      this.deps.scores.snapshot(),
      pricedBy(query) || sort === 'price' ? listingPrices(this.deps.orm.em.fork()) : null,
    ]);
    const scoreOf = (d: number) => snapshot.scores.get(docs.ids[d]!) ?? NEUTRAL_SCORES;
    const prior = (d: number) => scoreOf(d).svc_score / 100;
    let relevance: Map<number, number> | null = null;
    let ordered: ArrayLike<number>;
    let count: number;
    if (query.q) {
      relevance = await this.rankDocs(docs, query.q, query, 'hybrid');
      let ids = [...relevance.keys()];
      if (prices) ids = ids.filter((d) => priceFilter(query, prices)(docs.ids[d]!));
      const rel = (d: number) => relevance!.get(d)! + RANKING.prior * prior(d);
      ordered = orderDocs(ids, docs, keyOf(sort, docs, snapshot.scores, prices), rel, prior);
      count = ids.length;
    } else {
      ({ ordered, count } = this.browse(docs, query, sort, snapshot, prices));
    }
    const pageDocs = Array.from(
      { length: Math.max(0, Math.min(ordered.length, query.offset + query.limit) - query.offset) },
      (_, i) => ordered[query.offset + i]!,
    );
    const pageIds = pageDocs.map((d) => docs.ids[d]!);
    const pageScores = new Map<string, Scores>(pageDocs.map((d) => [docs.ids[d]!, scoreOf(d)]));
    const fused = relevance;
    const rel = fused
      ? (id: string) =>
          (fused.get(docs.docOf.get(id) ?? -1) ?? 0) + RANKING.prior * (pageScores.get(id)!.svc_score / 100)
      : null;
    const items = await readItems(this.deps.orm.em.fork(), pageIds, pageScores, rel);
    return { items, ...totalOf(count), ...page };
  }

  /** Browsing (no q): the sort's prepared order, filtered; the page and the count of what passes. */
  private browse(
    docs: Documents,
    query: SearchQuery,
    sort: SearchSort,
    snapshot: Awaited<ReturnType<ScoresReader['snapshot']>>,
    prices: Map<string, ListingPrices> | null,
  ): { ordered: ArrayLike<number>; count: number } {
    const keep = this.keeper(docs, query);
    const priced = prices && pricedBy(query) ? priceFilter(query, prices) : null;
    const pass = priced ? (d: number) => keep(d) && priced(docs.ids[d]!) : keep;
    const orders: ArrayLike<number>[] = [];
    let skip: Uint8Array | null = null;
    if (sort === 'price') {
      // Listings with a price first, cheapest first; then the rest in the svc_score order (their keys all tie).
      const withPrice: number[] = [];
      skip = new Uint8Array(docs.ids.length);
      for (const id of prices!.keys()) {
        const d = docs.docOf.get(id);
        if (d === undefined) continue;
        withPrice.push(d);
        skip[d] = 1;
      }
      const prior = (d: number) => (snapshot.scores.get(docs.ids[d]!) ?? NEUTRAL_SCORES).svc_score;
      orders.push(orderDocs(withPrice, docs, keyOf('price', docs, snapshot.scores, prices), () => 0, prior));
      orders.push(this.orders.order('svc_score', docs, this.copy.version, snapshot));
    } else orders.push(this.orders.order(sort === 'relevance' ? 'svc_score' : sort, docs, this.copy.version, snapshot));
    const end = query.offset + query.limit;
    const out: number[] = [];
    let count = 0;
    orders.forEach((order, part) => {
      for (let i = 0; i < order.length; i++) {
        const d = order[i]!;
        if ((part > 0 && skip?.[d] === 1) || !pass(d)) continue;
        if (count < end) out.push(d);
        count++;
      }
    });
    return { ordered: out, count };
  }
}

/** Documents of the first RANKING.semanticDepth (at least `results`) of a semantic list: those that add to fused scores. */
function nearestDocs(list: VectorHit[], results: number): number[] {
  return list.slice(0, Math.max(RANKING.semanticDepth, results)).map((s) => s.doc);
}

function fuse(lists: [number[], number][]): Map<number, number> {
  const { rrfK } = RANKING;
  const fused = new Map<number, number>();
  const max = lists.reduce((s, [, w]) => s + w / (rrfK + 1), 0);
  for (const [docs, w] of lists) {
    docs.forEach((d, i) => fused.set(d, (fused.get(d) ?? 0) + w / (rrfK + 1 + i) / max));
  }
  return fused;
}
