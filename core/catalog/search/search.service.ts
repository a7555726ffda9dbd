/**
 * GET /v1/search: hybrid ranking of live listings.
 *
 * - Keyword (Postgres): full-text search over api_search.document (weights A name/tags/category/examples, B summary
 *   and synonyms, C description and endpoint summaries, D endpoint path words), the query's words OR-ed, ranked by how
 *   many of them a listing holds, then ts_rank; plus a typo list: query words the index does not know
 *   (search_lexicon) corrected to their nearest indexed words by pg_trgm similarity.
 * - Semantic (in process): cosine of the query's vector with every live listing's stored vector (brute force over a
 *   per-process copy; 10k listings × 100 dimensions is about 1 ms).
 * - Fusion: weighted reciprocal rank fusion of the three lists; a callable listing's score doubled (callable first);
 *   a small svc_score prior as tie breaker.
 * - Results, and the total: every keyword match (and corrected-word match) plus the matches by meaning
 *   (semanticMatches), uncapped: the total is the number a person can page through.
 *
 * The per-process copy (id, category, source, published_at, vector) is refreshed incrementally from the rows'
 * updated_at at most every SYNC_MS, so a listing published or unpublished in another process (the worker) is
 * searchable, or gone, within about half a second. Browsing (no q) and the non-relevance sorts run over the same
 * copy; display fields are read for the page only.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../logger.js';
import { fromBytes, normalize, type Embedder } from './embedder.js';
import { vectorUsable, type SearchIndex } from './search-index.js';
import type { SearchQuery, SearchSort } from './search.schemas.js';
import type { ScoresReader } from './scores.js';
import { readItems } from './search-items.js';
import type { SearchItem } from './search.schemas.js';
import { dotAt, nearest, RANKING, sortKey, type Entry } from './search-ranking.js';
import { fullText, lexemesOf } from './search-text.js';
import { listingPrices, priceFilter, pricedBy, type ListingPrices } from './search-prices.js';

export type { SearchItem } from './search.schemas.js';
export { RANKING } from './search-ranking.js';
export { tsOr } from './search-text.js';

export type Ranker = 'keyword' | 'semantic' | 'hybrid';

export interface SearchResult {
  items: SearchItem[];
  total: number;
  limit: number;
  offset: number;
  sort: SearchSort;
}

const SYNC_MS = 400;
const OVERLAP_MS = 5_000;

/** A listing as the sync reads it: what the per-process copy holds, and its version. */
interface SyncRow {
  id: string;
  status: string;
  category: string | null;
  source: string;
  published_at: Date | null;
  updated_at: Date;
  embedding: Buffer | null;
  embedder: string | null;
  s_updated: Date | null;
  v: string;
}

/** Every live listing (the first sync), or the listings whose ids are given. */
function syncRowsSql(first: boolean): string {
  return `select a.id, a.status, a.category, a.source, a.published_at, a.updated_at,
              s.embedding, s.embedder, s.updated_at as s_updated,
              a.updated_at::text || '|' || coalesce(s.updated_at::text, '') as v
         from apis a left join api_search s on s.api_id = a.id
        where ${first ? `a.status = 'live'` : `a.id in (select jsonb_array_elements_text(?::jsonb))`}`;
}

export class SearchService {
  private entries = new Map<string, Entry>();
  /** Each listing's version as last read (its and its search row's updated_at), live or not. */
  private readonly versions = new Map<string, string>();
  private watermark: Date | null = null;
  private lastSync = 0;
  private syncing: Promise<void> | null = null;
  private common: { at: number; words: ReadonlySet<string> } | null = null;
  private commonLoading: Promise<void> | null = null;

  constructor(
    private readonly deps: {
      orm: MikroORM;
      embedder: Embedder;
      index: SearchIndex;
      scores: ScoresReader;
      logger: Logger;
    },
  ) {}

  /**
   * Bring the per-process copy up to date (at most every SYNC_MS unless forced). A forced sync reflects every write
   * committed before it was called: a sync already running may have read before that write, so it is waited out first.
   */
  async sync(force = false): Promise<void> {
    if (!force && this.watermark && Date.now() - this.lastSync < SYNC_MS) return;
    if (force && this.syncing) await this.syncing.catch(() => undefined);
    this.syncing ??= this.doSync().finally(() => {
      this.syncing = null;
    });
    await this.syncing;
  }

  private async doSync(): Promise<void> {
    const started = Date.now();
    const em = this.deps.orm.em.fork();
    const first = this.watermark === null;
    let ids: string[] | null = null;
    if (!first) {
      // What changed since the watermark (with an overlap for commits that land late), without the vectors: rows this
      // process already holds at the same version are not read again (after a bulk import every listing sits in the
      // overlap, and re-reading 10k vectors every 0.4 s cost ~100 ms a sync).
      const since = new Date(this.watermark!.getTime() - OVERLAP_MS);
      const changed = await em.execute<{ id: string; v: string }[]>(
        `select a.id, a.updated_at::text || '|' || coalesce(s.updated_at::text, '') as v
           from apis a left join api_search s on s.api_id = a.id
          where a.id in (select id from apis where updated_at > ? union select api_id from api_search where updated_at > ?)`,
        [since, since],
      );
      ids = changed.filter((c) => this.versions.get(c.id) !== c.v).map((c) => c.id);
      if (ids.length === 0) {
        this.lastSync = Date.now();
        return;
      }
    }
    const rows = await em.execute<SyncRow[]>(syncRowsSql(first), first ? [] : [JSON.stringify(ids)]);
    let mark = this.watermark?.getTime() ?? 0;
    const stale: string[] = [];
    for (const r of rows) {
      mark = Math.max(mark, new Date(r.updated_at).getTime(), r.s_updated ? new Date(r.s_updated).getTime() : 0);
      this.versions.set(r.id, r.v);
      if (r.status !== 'live') {
        this.entries.delete(r.id);
        continue;
      }
      // A vector of this embedder is used even when its document format is older; the row is indexed again.
      const current = r.embedding && vectorUsable(r.embedder, this.deps.embedder.id);
      if (r.embedder !== this.deps.index.marker) stale.push(r.id);
      this.entries.set(r.id, {
        id: r.id,
        category: r.category,
        source: r.source,
        publishedAt: r.published_at ? new Date(r.published_at).getTime() : 0,
        vec: current ? fromBytes(r.embedding!) : null,
      });
    }
    this.watermark = new Date(mark || started);
    this.lastSync = Date.now();
    // Live listings with no vector, one from another embedder or an older document format: index them in the background.
    if (first && stale.length) {
      this.deps.logger.info({ count: stale.length }, 'search: indexing listings without a current vector');
      this.deps.index.index(stale).catch((err: unknown) => this.deps.logger.warn({ err }, 'search: indexing failed'));
    }
  }

  /** Lexemes in more than RANKING.commonShare of indexed documents (recomputed every 10 minutes; ~100 ms at 10k). */
  private async commonLexemes(): Promise<ReadonlySet<string>> {
    const now = Date.now();
    if (this.common && now - this.common.at < 600_000) return this.common.words;
    this.commonLoading ??= (async () => {
      try {
        const rows = await this.deps.orm.em.fork().execute<{ word: string }[]>(
          `select word from ts_stat('select document from api_search')
              where ndoc > greatest(20, ? * (select count(*) from api_search))`,
          [RANKING.commonShare],
        );
        this.common = { at: Date.now(), words: new Set(rows.map((r) => r.word)) };
      } finally {
        this.commonLoading = null;
      }
    })();
    await this.commonLoading;
    return this.common?.words ?? new Set();
  }

  private filtered(q: Pick<SearchQuery, 'category' | 'source'>): Entry[] {
    const out: Entry[] = [];
    for (const e of this.entries.values()) {
      if (q.category && e.category !== q.category) continue;
      if (q.source && e.source !== q.source) continue;
      out.push(e);
    }
    return out;
  }

  private semantic(qv: Float32Array, pool: Entry[]): { id: string; score: number }[] {
    if (!qv.some((x) => x !== 0)) return [];
    const scored: { id: string; score: number }[] = [];
    const dims = qv.length;
    for (const e of pool) {
      if (!e.vec) continue;
      // The combined vector, raised toward the best-matching example question when one fits better.
      const s0 = dotAt(qv, e.vec, 0);
      let best = s0;
      for (let off = dims; off < e.vec.length; off += dims) best = Math.max(best, dotAt(qv, e.vec, off));
      const lift = e.source === 'provider' ? RANKING.providerIntentLift : RANKING.intentLift;
      const s = s0 + lift * (best - s0);
      if (s >= RANKING.semanticFloor) scored.push({ id: e.id, score: s });
    }
    scored.sort((a, b) => b.score - a.score);
    return scored;
  }

  /**
   * The listings of a semantic list that are results by meaning alone: the `atLeast` nearest, then those within
   * `share` of the best score. The rest of the list still adds its small part to a keyword match's fused score, but is
   * no result on its own: word-vector cosines of unrelated texts reach 0.5, so above the floor alone most of the
   * catalog matched any query ("qr code": 6,691 of 10,000).
   */
  private semanticMatches(list: { id: string; score: number }[]): string[] {
    const { share, atLeast } = RANKING.semanticMatch;
    const cut = (list[0]?.score ?? 0) * share;
    const end = list.findIndex((x, i) => i >= atLeast && x.score < cut);
    return (end < 0 ? list : list.slice(0, end)).map((x) => x.id);
  }

  private async keyword(
    q: string,
    f: Pick<SearchQuery, 'category' | 'source'>,
  ): Promise<{ fts: string[]; trigram: string[] }> {
    const em = this.deps.orm.em.fork();
    const [common, lexemes] = await Promise.all([this.commonLexemes(), lexemesOf(em, q)]);
    // The query's lexemes OR-ed, without those in more than RANKING.commonShare of the documents ("get", "data",
    // "free"): they match thousands of rows, cost the ranking its time and carry no meaning. When every lexeme is
    // that common, all are kept.
    const rare = lexemes.filter((l) => !common.has(l.lex));
    const main = (rare.length ? rare : lexemes).map((l) => l.lex);
    // Typos and partial words: lexemes the index does not know, replaced by their nearest indexed words.
    const fixes = [...new Set(lexemes.flatMap((l) => l.fixes ?? []))];
    const [fts, typos] = await Promise.all([fullText(em, main, f), fullText(em, fixes, f)]);
    // When the full-text list already holds plenty, corrections add little (a quarter weight) and mostly noise.
    const trigram = fts.length < RANKING.trigramWhenFewer ? typos : [];
    return { fts, trigram };
  }

  /** Relevance-ordered ids with their fused score (0..1), for one ranker. Used by search and by the evaluation. */
  async rank(
    q: string,
    f: Pick<SearchQuery, 'category' | 'source'> = {},
    ranker: Ranker = 'hybrid',
  ): Promise<Map<string, number>> {
    await this.sync();
    const { weights } = RANKING;
    const lists: [string[], number][] = [];
    // The listings that are results: keyword matches, and matches by meaning (semanticMatches).
    let byMeaning: string[] = [];
    // The database works on the keyword lists while this process scores vectors.
    const keyword = ranker !== 'semantic' ? this.keyword(q, f) : null;
    keyword?.catch(() => undefined);
    const pool = ranker !== 'keyword' ? this.filtered(f) : [];
    // The query's vector, once: the feedback pass below moves it.
    const qv = ranker !== 'keyword' ? (await this.deps.embedder.embed([q]))[0] : undefined;
    if (ranker !== 'keyword') {
      const sem = qv ? this.semantic(qv, pool) : [];
      byMeaning = this.semanticMatches(sem);
      lists.push([nearest(sem, byMeaning.length), weights.semantic]);
    }
    let byWords: string[] = [];
    if (keyword) {
      const kw = await keyword;
      lists.push([kw.fts, weights.fts], [kw.trigram, weights.trigram]);
      byWords = [...kw.fts, ...kw.trigram];
    }
    let fused = this.fuse(lists);
    if (ranker === 'hybrid' && RANKING.feedback.top > 0 && fused.size) {
      // Pseudo-relevance feedback in vector space: the query moved toward its first results' vectors, so a listing
      // found through one precise intent brings its kind along (one more pass over the vectors, ~5 ms at 10k).
      const top = [...fused.entries()].sort((a, b) => b[1] - a[1]).slice(0, RANKING.feedback.top);
      const moved = Float32Array.from(qv ?? []);
      for (const [id] of top) {
        const v = this.entries.get(id)?.vec;
        if (!v) continue;
        for (let i = 0; i < moved.length; i++) moved[i]! += (RANKING.feedback.weight / top.length) * v[i]!;
      }
      const sem = this.semantic(normalize(moved), pool);
      byMeaning = this.semanticMatches(sem);
      lists[0] = [nearest(sem, byMeaning.length), weights.semantic];
      fused = this.fuse(lists);
    }
    const results = new Set([...byWords, ...byMeaning]);
    for (const id of fused.keys()) if (!results.has(id)) fused.delete(id);
    // Callable first: a listing people can call through the gateway with the key they hold is worth more to them than
    // a directory entry (a pointer to sign up elsewhere) of the same relevance. Multiplied, so a weak match stays weak.
    for (const [id, score] of fused) {
      if (this.entries.get(id)?.source === 'provider') fused.set(id, score * (1 + RANKING.callable));
    }
    return fused;
  }

  private fuse(lists: [string[], number][]): Map<string, number> {
    const { rrfK } = RANKING;
    const fused = new Map<string, number>();
    const max = lists.reduce((s, [, w]) => s + w / (rrfK + 1), 0);
    for (const [ids, w] of lists) {
      ids.forEach((id, i) => {
        if (this.entries.has(id)) fused.set(id, (fused.get(id) ?? 0) + w / (rrfK + 1 + i) / max);
      });
    }
    return fused;
  }

  async search(asked: SearchQuery): Promise<SearchResult> {
    // `callable` is the people's word for the source (issue 22): true a provider's listing, false a directory entry.
    const wanted = asked.callable === undefined ? undefined : asked.callable === 'true' ? 'provider' : 'directory';
    if (wanted && asked.source && asked.source !== wanted) {
      const sort = asked.sort ?? (asked.q ? 'relevance' : 'svc_score');
      return { items: [], total: 0, limit: asked.limit, offset: asked.offset, sort };
    }
    const query: SearchQuery = wanted ? { ...asked, source: wanted } : asked;
    await this.sync();
    const sort: SearchSort = query.sort ?? (query.q ? 'relevance' : 'svc_score');
    let relevance: Map<string, number> | null = null;
    let ids: string[];
    if (query.q) {
      relevance = await this.rank(query.q, query);
      ids = [...relevance.keys()];
    } else {
      ids = this.filtered(query).map((e) => e.id);
    }
    const em = this.deps.orm.em.fork();
    let prices: Map<string, ListingPrices> | null = null;
    if (pricedBy(query) || sort === 'price') {
      prices = await listingPrices(em);
      ids = ids.filter(priceFilter(query, prices));
    }
    const scores = await this.deps.scores.scoresFor(ids);
    const prior = (id: string) => (scores.get(id)?.svc_score ?? 50) / 100;
    const rel = (id: string) => (relevance ? (relevance.get(id) ?? 0) + RANKING.prior * prior(id) : 0);
    const key = sortKey(sort, scores, this.entries, prices);
    // Keys computed once per listing, not once per comparison (browsing 10k listings sorted in ~3 ms, not ~12).
    const rows = ids.map((id) => ({ id, k: key(id), r: rel(id), p: prior(id) }));
    rows.sort((a, b) => b.k - a.k || b.r - a.r || b.p - a.p || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const page = rows.slice(query.offset, query.offset + query.limit).map((r) => r.id);
    const items = await readItems(em, page, scores, relevance ? rel : null);
    return { items, total: ids.length, limit: query.limit, offset: query.offset, sort };
  }
}
