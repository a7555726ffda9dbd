/**
 * The per-process copy search ranks over (search.service.ts): every live listing as a document number with its
 * category, source and publication time, its full-text lexemes in a KeywordIndex and its vectors in a VectorIndex.
 *
 * Loaded in pages of LOAD_PAGE listings by id (the event loop serves requests between pages), then kept up to date
 * incrementally from the rows' updated_at (apis and api_search, both indexed): a request finding the copy older than
 * SYNC_MS starts a refresh in the background and is answered from the copy as it is, so a listing published or
 * unpublished in another process (the worker) is searchable, or gone, within about half a second of steady traffic
 * (docs/decisions.md, "Search at 100,000 listings"), and no request waits for a refresh, except the first after this
 * process wrote a listing (SearchIndex.onChange: read-your-writes within a process). A changed listing
 * gets a new document number; the old one is dead (skipped by both indexes). When dead numbers pass DEAD_SHARE of
 * the copy, the next sync builds a fresh copy in the background and swaps it in.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../logger.js';
import { fromBytes, type Embedder } from './embedder.js';
import { KeywordIndex } from './keyword-index.js';
import { vectorUsable, type SearchIndex } from './search-index.js';
import { RANKING } from './search-ranking.js';
import { IVF_MIN_VECTORS, VectorIndex } from './vector-index.js';

export const SYNC_MS = 400;
const OVERLAP_MS = 5_000;
const LOAD_PAGE = 5_000;
const DEAD_SHARE = 0.25;

/**
 * The watermark a refresh starts from: the database's clock; on a read replica, the commit time of the last
 * transaction it replayed (rows it has not replayed yet may carry earlier times than its clock).
 */
const CLOCK_SQL = `select case when pg_is_in_recovery() then coalesce(pg_last_xact_replay_timestamp(), now())
                               else now() end as at`;

/** A listing as the sync reads it. */
interface SyncRow {
  id: string;
  status: string;
  category: string | null;
  source: string;
  published_at: Date | null;
  embedding: Buffer | null;
  embedder: string | null;
  document: string | null;
  v: string;
}

const SYNC_COLUMNS = `a.id, a.status, a.category, a.source, a.published_at,
              s.embedding, s.embedder, s.document::text as document,
              a.updated_at::text || '|' || coalesce(s.updated_at::text, '') as v
         from apis a left join api_search s on s.api_id = a.id`;

/** The documents of one copy: columns by document number. */
export class Documents {
  readonly ids: string[] = [];
  /** The current document number of each live listing. */
  readonly docOf = new Map<string, number>();
  live = new Uint8Array(1024);
  category = new Int32Array(1024);
  provider = new Uint8Array(1024);
  publishedAt = new Float64Array(1024);
  readonly categories: (string | null)[] = [];
  private readonly categoryCode = new Map<string | null, number>();
  liveCount = 0;
  readonly keyword = new KeywordIndex();
  readonly vectors: VectorIndex;

  constructor(dims: number) {
    this.vectors = new VectorIndex(
      dims,
      (d) => this.live[d] === 1,
      (d) => (this.provider[d] === 1 ? RANKING.providerIntentLift : RANKING.intentLift),
    );
  }

  codeOf(category: string | null): number {
    let c = this.categoryCode.get(category);
    if (c === undefined) {
      c = this.categories.length;
      this.categories.push(category);
      this.categoryCode.set(category, c);
    }
    return c;
  }

  /** The listing's new document (the previous one, if any, dies). */
  put(r: SyncRow, vec: Float32Array | null): void {
    this.drop(r.id);
    const d = this.ids.length;
    if (d >= this.live.length) this.grow();
    this.ids.push(r.id);
    this.docOf.set(r.id, d);
    this.live[d] = 1;
    this.liveCount++;
    this.category[d] = this.codeOf(r.category);
    this.provider[d] = r.source === 'provider' ? 1 : 0;
    this.publishedAt[d] = r.published_at ? new Date(r.published_at).getTime() : 0;
    if (r.document) this.keyword.add(d, r.document);
    if (vec) this.vectors.add(d, vec);
  }

  drop(id: string): void {
    const old = this.docOf.get(id);
    if (old === undefined) return;
    this.live[old] = 0;
    this.liveCount--;
    this.docOf.delete(id);
  }

  get deadShare(): number {
    return this.ids.length ? 1 - this.liveCount / this.ids.length : 0;
  }

  private grow(): void {
    const n = this.live.length * 2;
    const g = <T extends Uint8Array | Int32Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const next = make(n);
      next.set(a);
      return next;
    };
    this.live = g(this.live, (k) => new Uint8Array(k));
    this.category = g(this.category, (k) => new Int32Array(k));
    this.provider = g(this.provider, (k) => new Uint8Array(k));
    this.publishedAt = g(this.publishedAt, (k) => new Float64Array(k));
  }

  /** Live document numbers, in document order. */
  *liveDocs(): Iterable<number> {
    for (let d = 0; d < this.ids.length; d++) if (this.live[d] === 1) yield d;
  }

  /** Bytes held by the columns and both indexes (ids and maps estimated at 80 bytes a listing). */
  bytes(): number {
    const columns = this.live.byteLength + this.category.byteLength + this.provider.byteLength;
    return columns + this.publishedAt.byteLength + this.ids.length * 80 + this.keyword.bytes() + this.vectors.bytes();
  }
}

export class SearchCopy {
  docs: Documents;
  /** Each listing's version as last read (its and its search row's updated_at), live or not. */
  private versions = new Map<string, string>();
  private watermark: Date | null = null;
  private lastSync = 0;
  private syncing: Promise<void> | null = null;
  private rebuilding: Promise<void> | null = null;
  /** Moves whenever a document is added or dropped (search's cached sort orders follow it). */
  version = 0;
  /** This process wrote a listing since the last refresh began: the next request waits for a refresh. */
  private dirty = false;

  constructor(private readonly deps: { orm: MikroORM; embedder: Embedder; index: SearchIndex; logger: Logger }) {
    this.docs = new Documents(deps.embedder.dims);
    deps.index.onChange(() => {
      this.dirty = true;
    });
  }

  /**
   * Bring the copy up to date. Unforced, a request never waits for a refresh (only for the first load): when the copy
   * is older than SYNC_MS a refresh starts in the background and the request is answered from the copy as it is. A
   * forced sync reflects every write committed before it was called: a sync already running may have read before that
   * write, so it is waited out first.
   */
  async sync(force = false): Promise<void> {
    if (this.dirty) {
      this.dirty = false;
      force = true;
    }
    if (this.watermark !== null && !force) {
      if (!this.syncing && Date.now() - this.lastSync >= SYNC_MS) {
        this.start().catch((err: unknown) => this.deps.logger.warn({ err }, 'search: refreshing the copy failed'));
      }
      return;
    }
    if (force && this.syncing) await this.syncing.catch(() => undefined);
    await this.start();
  }

  private start(): Promise<void> {
    this.syncing ??= this.doSync().finally(() => {
      this.syncing = null;
    });
    return this.syncing;
  }

  private async doSync(): Promise<void> {
    if (this.watermark === null) {
      this.watermark = await this.load(this.docs, this.versions);
      return;
    }
    const em = this.deps.orm.em.fork();
    // What changed since the last refresh began (less an overlap for commits that land late), without the vectors:
    // rows this process already holds at the same version are not read again. The watermark is the database's clock
    // at the start of a refresh, so a quiet catalog re-reads nothing (a bulk import's last rows are not read forever).
    const [{ at }] = (await em.execute<{ at: Date }[]>(CLOCK_SQL)) as [{ at: Date }];
    const since = new Date(this.watermark.getTime() - OVERLAP_MS);
    const changed = await em.execute<{ id: string; v: string }[]>(
      `select a.id, a.updated_at::text || '|' || coalesce(s.updated_at::text, '') as v
         from apis a left join api_search s on s.api_id = a.id
        where a.id in (select id from apis where updated_at > ? union select api_id from api_search where updated_at > ?)`,
      [since, since],
    );
    const ids = changed.filter((c) => this.versions.get(c.id) !== c.v).map((c) => c.id);
    if (ids.length) {
      const rows = await em.execute<SyncRow[]>(
        `select ${SYNC_COLUMNS} where a.id in (select jsonb_array_elements_text(?::jsonb))`,
        [JSON.stringify(ids)],
      );
      this.apply(this.docs, this.versions, rows);
    }
    this.watermark = new Date(at);
    this.lastSync = Date.now();
    if (this.docs.deadShare > DEAD_SHARE && !this.rebuilding) {
      this.rebuilding = this.rebuild().finally(() => {
        this.rebuilding = null;
      });
    }
  }

  /** Every live listing, a page at a time by id; listings without a current vector are indexed in the background. */
  private async load(docs: Documents, versions: Map<string, string>): Promise<Date> {
    const em = this.deps.orm.em.fork();
    const [{ at }] = (await em.execute<{ at: Date }[]>(CLOCK_SQL)) as [{ at: Date }];
    const stale: string[] = [];
    let after = '';
    for (;;) {
      const rows = await em.execute<SyncRow[]>(
        `select ${SYNC_COLUMNS} where a.status = 'live' and a.id > ? order by a.id limit ${LOAD_PAGE}`,
        [after],
      );
      stale.push(...this.apply(docs, versions, rows));
      if (rows.length < LOAD_PAGE) break;
      after = rows[rows.length - 1]!.id;
    }
    this.lastSync = Date.now();
    docs.keyword.trim();
    if (docs.vectors.rows >= IVF_MIN_VECTORS) {
      docs.vectors.build().catch((err: unknown) => this.deps.logger.warn({ err }, 'search: vector index build failed'));
    }
    if (stale.length) {
      this.deps.logger.info({ count: stale.length }, 'search: indexing listings without a current vector');
      this.deps.index.index(stale).catch((err: unknown) => this.deps.logger.warn({ err }, 'search: indexing failed'));
    }
    return new Date(at);
  }

  /** Apply read rows to a copy; returns the live ones whose index row is missing or from an older format. */
  private apply(docs: Documents, versions: Map<string, string>, rows: SyncRow[]): string[] {
    const stale: string[] = [];
    for (const r of rows) {
      versions.set(r.id, r.v);
      if (r.status !== 'live') {
        docs.drop(r.id);
        continue;
      }
      // A vector of this embedder is used even when its document format is older; the row is indexed again.
      const current = r.embedding && vectorUsable(r.embedder, this.deps.embedder.id);
      if (r.embedder !== this.deps.index.marker) stale.push(r.id);
      docs.put(r, current ? fromBytes(r.embedding!) : null);
    }
    if (rows.length) this.version++;
    return stale;
  }

  /** A fresh copy without the dead documents, loaded beside this one and swapped in. */
  private async rebuild(): Promise<void> {
    const docs = new Documents(this.deps.embedder.dims);
    const versions = new Map<string, string>();
    try {
      const at = await this.load(docs, versions);
      // Changes that landed while loading are read by the next refresh (from the load's start).
      this.docs = docs;
      this.versions = versions;
      this.watermark = at;
      this.version++;
    } catch (err) {
      this.deps.logger.warn({ err }, 'search: rebuilding the copy failed');
    }
  }
}
