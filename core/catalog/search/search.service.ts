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
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../logger.js';
import { fromBytes, normalize, type Embedder } from './embedder.js';
import { vectorUsable, type SearchIndex } from './search-index.js';
import type { SearchItem, SearchQuery, SearchSort } from './search.schemas.js';
import type { ScoresReader, Scores } from './scores.js';

export type Ranker = 'keyword' | 'semantic' | 'hybrid';

export type { SearchItem } from './search.schemas.js';

export interface SearchResult {
  items: SearchItem[];
  total: number;
  limit: number;
  offset: number;
  sort: SearchSort;
}

interface Entry {
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

const SYNC_MS = 400;
const OVERLAP_MS = 5_000;

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
    const rows = await em.execute<
      {
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
      }[]
    >(
      `select a.id, a.status, a.category, a.source, a.published_at, a.updated_at,
              s.embedding, s.embedder, s.updated_at as s_updated,
              a.updated_at::text || '|' || coalesce(s.updated_at::text, '') as v
         from apis a left join api_search s on s.api_id = a.id
        where ${first ? `a.status = 'live'` : `a.id in (select jsonb_array_elements_text(?::jsonb))`}`,
      first ? [] : [JSON.stringify(ids)],
    );
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
    const [common, lexemes] = await Promise.all([this.commonLexemes(), this.lexemesOf(em, q)]);
    // The query's lexemes OR-ed, without those in more than RANKING.commonShare of the documents ("get", "data",
    // "free"): they match thousands of rows, cost the ranking its time and carry no meaning. When every lexeme is
    // that common, all are kept.
    const rare = lexemes.filter((l) => !common.has(l.lex));
    const main = (rare.length ? rare : lexemes).map((l) => l.lex);
    // Typos and partial words: lexemes the index does not know, replaced by their nearest indexed words.
    const fixes = [...new Set(lexemes.flatMap((l) => l.fixes ?? []))];
    const [fts, typos] = await Promise.all([this.fullText(em, main, f), this.fullText(em, fixes, f)]);
    // When the full-text list already holds plenty, corrections add little (a quarter weight) and mostly noise.
    const trigram = fts.length < RANKING.trigramWhenFewer ? typos : [];
    return { fts, trigram };
  }

  /**
   * The query's lexemes (the english configuration's), each with its corrections when the index does not know it
   * (not in search_lexicon, at least RANKING.typo.minLength long): its nearest indexed words by pg_trgm similarity.
   */
  private async lexemesOf(em: EntityManager, q: string): Promise<{ lex: string; fixes: string[] | null }[]> {
    const { minLength, maxWords, fixesPerWord } = RANKING.typo;
    return em.execute<{ lex: string; fixes: string[] | null }[]>(
      `with l as (select distinct lex from unnest(tsvector_to_array(to_tsvector('english', ?))) lex),
            u as (select lex from l where length(lex) >= ${minLength}
                     and not exists (select 1 from search_lexicon w where w.word = l.lex)
                   order by lex limit ${maxWords})
       select l.lex, (select array_agg(f.word) from (select word from search_lexicon where word % u.lex
                         order by similarity(word, u.lex) desc, word limit ${fixesPerWord}) f) as fixes
         from l left join u on u.lex = l.lex`,
      [q],
    );
  }

  /**
   * Ids of every listing matching any of these lexemes (no cut-off: the search's total counts them all), best first:
   * those holding more of the words first, then by ts_rank. ts_rank alone sums occurrences by field weight, so a
   * listing with "weather" five times in its name, category and examples came before one saying "weather forecast" in
   * its summary and its endpoint (docs/decisions.md, "Callable first"). The tsquery and the words arrive as
   * parameters, parsed once when the statement is planned: built inside the statement, the tsquery was cast per row
   * (75 ms instead of 3 at 10k). Without filters, liveness is checked against the per-process copy (rank() drops ids
   * it does not hold): joining apis cost a scan of every listing per query.
   */
  private async fullText(
    em: EntityManager,
    words: string[],
    f: Pick<SearchQuery, 'category' | 'source'>,
  ): Promise<string[]> {
    const tsquery = tsOr(words);
    if (tsquery === null) return [];
    const filters: string[] = [];
    const params: unknown[] = [tsquery];
    if (f.category) {
      filters.push(' and a.category = ?');
      params.push(f.category);
    }
    if (f.source) {
      filters.push(' and a.source = ?');
      params.push(f.source);
    }
    const joined = filters.length > 0;
    // How many of the words a document holds (one index-free match per word; none to count for a single word).
    const held = words.length > 1 ? words.map(() => '(s.document @@ ?::tsquery)::int').join(' + ') : null;
    const rows = await em.execute<{ id: string }[]>(
      `select s.api_id as id from api_search s${joined ? ' join apis a on a.id = s.api_id' : ''}
        where s.document @@ ?::tsquery${joined ? ` and a.status = 'live'${filters.join('')}` : ''}
        order by ${held ? `${held} desc, ` : ''}ts_rank(s.document, ?::tsquery) desc, s.api_id`,
      [...params, ...(held ? words.map((w) => tsOr([w])) : []), tsquery],
    );
    return rows.map((r) => r.id);
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
    let prices: Map<string, { min: number; max: number }> | null = null;
    if (query.max_price_cents !== undefined || sort === 'price') {
      const rows = await em.execute<{ api_id: string; min: string; max: string }[]>(
        `select e.api_id, min(e.price_cents) as min, max(e.price_cents) as max
           from endpoints e join apis a on a.id = e.api_id and a.status = 'live' group by e.api_id`,
      );
      prices = new Map(rows.map((r) => [r.api_id, { min: Number(r.min), max: Number(r.max) }]));
      if (query.max_price_cents !== undefined) {
        const cap = query.max_price_cents;
        ids = ids.filter((id) => (prices!.get(id)?.min ?? Infinity) <= cap);
      }
    }
    const scores = await this.deps.scores.scoresFor(ids);
    const prior = (id: string) => (scores.get(id)?.svc_score ?? 50) / 100;
    const rel = (id: string) => (relevance ? (relevance.get(id) ?? 0) + RANKING.prior * prior(id) : 0);
    const key = sortKey(sort, scores, this.entries, prices);
    // Keys computed once per listing, not once per comparison (browsing 10k listings sorted in ~3 ms, not ~12).
    const rows = ids.map((id) => ({ id, k: key(id), r: rel(id), p: prior(id) }));
    rows.sort((a, b) => b.k - a.k || b.r - a.r || b.p - a.p || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const page = rows.slice(query.offset, query.offset + query.limit).map((r) => r.id);
    const items = await this.items(page, scores, relevance ? rel : null);
    return { items, total: ids.length, limit: query.limit, offset: query.offset, sort };
  }

  private async items(
    ids: string[],
    scores: Map<string, Scores>,
    rel: ((id: string) => number) | null,
  ): Promise<SearchItem[]> {
    if (!ids.length) return [];
    const rows = await this.deps.orm.em.fork().execute<
      {
        id: string;
        slug: string;
        name: string;
        summary: string;
        tags: string[];
        source: 'provider' | 'directory';
        docs_url: string | null;
        category: string | null;
        category_name: string | null;
        provider_slug: string | null;
        provider_name: string | null;
        min: string | null;
        max: string | null;
      }[]
    >(
      `select a.id, a.slug, a.name, a.summary, a.tags, a.source, a.docs_url, a.category, c.name as category_name,
              p.slug as provider_slug, p.display_name as provider_name, e.min, e.max
         from apis a
         left join categories c on c.slug = a.category
         left join profiles p on p.org_id = a.org_id
         left join lateral (select min(price_cents) as min, max(price_cents) as max from endpoints
                             where api_id = a.id) e on true
        where a.id in (select jsonb_array_elements_text(?::jsonb)) and a.status = 'live'`,
      [JSON.stringify(ids)],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const out: SearchItem[] = [];
    for (const id of ids) {
      const r = byId.get(id);
      if (!r) continue; // unpublished since the copy was refreshed
      const s = scores.get(id)!;
      const min = r.min === null ? null : Number(r.min);
      out.push({
        slug: r.slug,
        name: r.name,
        summary: r.summary,
        category: r.category ? { slug: r.category, name: r.category_name ?? r.category } : null,
        tags: r.tags,
        source: r.source,
        callable: r.source === 'provider',
        docs_url: r.docs_url,
        price: {
          min_price_cents: min,
          max_price_cents: r.max === null ? null : Number(r.max),
          free: r.max !== null && Number(r.max) === 0,
        },
        svc_score: s.svc_score,
        merit: {
          reliability: s.reliability,
          latency: s.latency,
          usage: s.usage,
          value: s.value,
          freshness: s.freshness,
        },
        ...(rel ? { relevance: Math.round(Math.min(1, rel(id)) * 1e4) / 1e4 } : {}),
        provider: { slug: r.provider_slug, name: r.provider_name },
      });
    }
    return out;
  }
}

/** Ids of the first RANKING.semanticDepth (at least `results`) of a semantic list: those that add to fused scores. */
function nearest(list: { id: string }[], results: number): string[] {
  return list.slice(0, Math.max(RANKING.semanticDepth, results)).map((s) => s.id);
}

/** Dot product of `q` with the vector stored at `off` in `v` (no subarray allocation on the hot loop). */
function dotAt(q: Float32Array, v: Float32Array, off: number): number {
  let s = 0;
  for (let i = 0; i < q.length; i++) s += q[i]! * v[off + i]!;
  return s;
}

/** Descending sort key of a sort; `relevance` sorts only by the fused score (0 here). */
function sortKey(
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

/** A lexeme quoted for a tsquery (quotes and backslashes doubled). */
const quoteLexeme = (l: string) => `'${l.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** A tsquery matching any of these lexemes, or null when there are none. */
export function tsOr(lexemes: readonly string[]): string | null {
  if (!lexemes.length) return null;
  return lexemes.map(quoteLexeme).join(' | ');
}
