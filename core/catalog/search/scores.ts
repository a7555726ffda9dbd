/**
 * What search sorts by, besides relevance: merit scores and market figures of listings, from the rollup tables the
 * `catalog-rollups` schedule maintains (core/catalog/rollups/rollups.service.ts). Merit comes through `meritFor`
 * (core/catalog/rollups/merit.ts), the one reader of `api_scores` and its neutral defaults; this adds 30-day calls and GMV
 * (`api_stats`) and momentum (the `trending` board's metric in `api_ranks`), 0 when a listing has no row yet.
 * Results are cached for CACHE_MS per process (the rollups refresh every 30 s), and refreshed in the background up
 * to STALE_MS.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { MERIT_PARTS, meritFor, meritFromRow, neutralMerit } from '../rollups/merit.js';
import type { ScoreParts } from '../rollups/rollups.scoring.js';

export interface Scores extends ScoreParts {
  calls: number;
  gmv_cents: number;
  momentum: number;
}

const neutral = neutralMerit();
export const NEUTRAL_SCORES: Readonly<Scores> = Object.freeze({
  svc_score: neutral.svc_score,
  reliability: neutral.reliability,
  latency: neutral.latency,
  usage: neutral.usage,
  value: neutral.value,
  freshness: neutral.freshness,
  calls: 0,
  gmv_cents: 0,
  momentum: 0,
});

const CACHE_MS = 10_000;
/** Older than this, cached scores are not answered at all (the rollups promise freshness within 60 s). */
const STALE_MS = 30_000;
const clamp = (v: unknown, lo: number, hi: number, dflt: number) => {
  const n = Number(v);
  return Number.isFinite(n) ? Math.min(hi, Math.max(lo, n)) : dflt;
};

/** Every listing's scores with a rollup row (others are NEUTRAL_SCORES), and a version that moves when they change. */
export interface ScoresSnapshot {
  scores: ReadonlyMap<string, Scores>;
  version: number;
}

export class ScoresReader {
  private cache = new Map<string, { at: number; scores: Scores }>();
  private table: { at: number; snapshot: ScoresSnapshot } | null = null;
  private tableLoading: Promise<void> | null = null;

  constructor(private readonly orm: MikroORM) {}

  /** Ids whose stale scores are being re-read in the background (one read at a time). */
  private refreshing: Promise<void> | null = null;

  /**
   * Scores of each listing id (neutral defaults where there is no rollup row yet). Scores older than CACHE_MS but
   * younger than STALE_MS are answered from the cache while a background read refreshes them, so browsing all 10k
   * listings does not pay the read (10-20 ms) every CACHE_MS.
   */
  async scoresFor(apiIds: readonly string[]): Promise<Map<string, Scores>> {
    const now = Date.now();
    const out = new Map<string, Scores>();
    const missing: string[] = [];
    const stale: string[] = [];
    for (const id of apiIds) {
      const hit = this.cache.get(id);
      if (hit && now - hit.at < STALE_MS) {
        out.set(id, hit.scores);
        if (now - hit.at >= CACHE_MS) stale.push(id);
      } else missing.push(id);
    }
    if (stale.length && !this.refreshing) {
      this.refreshing = this.read(stale)
        .then(() => undefined)
        .catch(() => undefined) // the next request reads them again
        .finally(() => {
          this.refreshing = null;
        });
    }
    if (!missing.length) return out;
    for (const [id, scores] of await this.read(missing)) out.set(id, scores);
    return out;
  }

  /**
   * Scores of every listing with a rollup row, read whole (search's sorts and priors over the per-process copy: at
   * 100,000 listings, a read per query of the ids it needs cost more than the query). Re-read in the background
   * after CACHE_MS; the first call waits for the first read. `version` changes only when some score did.
   */
  async snapshot(): Promise<ScoresSnapshot> {
    const now = Date.now();
    if (!this.table || now - this.table.at >= CACHE_MS) {
      this.tableLoading ??= this.readAll()
        .catch(() => undefined) // the next call reads again
        .finally(() => {
          this.tableLoading = null;
        });
      if (!this.table || now - this.table.at >= STALE_MS) await this.tableLoading;
    }
    return this.table?.snapshot ?? { scores: new Map(), version: 0 };
  }

  private async readAll(): Promise<void> {
    const em = this.orm.em.fork();
    const [merit, stats, ranks] = await Promise.all([
      em.execute<Record<string, unknown>[]>(
        `select api_id, svc_score, reliability, latency, usage, value, freshness, updated_at from api_scores`,
      ),
      em.execute<Record<string, unknown>[]>(`select api_id, calls, gmv_cents from api_stats where "window" = '30d'`),
      em.execute<Record<string, unknown>[]>(
        `select api_id, metric from api_ranks where board = 'trending' and scope = 'overall'`,
      ),
    ]);
    const out = new Map<string, Scores>();
    const row = (id: string) => {
      let s = out.get(id);
      if (!s) out.set(id, (s = { ...NEUTRAL_SCORES }));
      return s;
    };
    for (const r of merit) {
      const m = meritFromRow(r as Parameters<typeof meritFromRow>[0]);
      const s = row(String(r.api_id));
      s.svc_score = m.svc_score;
      for (const k of MERIT_PARTS) s[k] = m[k];
    }
    for (const r of stats) {
      const s = row(String(r.api_id));
      s.calls = clamp(r.calls, 0, Number.MAX_SAFE_INTEGER, 0);
      s.gmv_cents = clamp(r.gmv_cents, 0, Number.MAX_SAFE_INTEGER, 0);
    }
    for (const r of ranks) row(String(r.api_id)).momentum = clamp(r.metric, -1e9, 1e9, 0);
    const previous = this.table?.snapshot;
    const same = previous !== undefined && sameScores(previous.scores, out);
    this.table = { at: Date.now(), snapshot: same ? previous : { scores: out, version: (previous?.version ?? 0) + 1 } };
  }

  private async read(ids: readonly string[]): Promise<Map<string, Scores>> {
    const now = Date.now();
    const em = this.orm.em.fork();
    const json = JSON.stringify(ids);
    const [merit, stats, ranks] = await Promise.all([
      meritFor(em, ids),
      em.execute<Record<string, unknown>[]>(
        `select api_id, calls, gmv_cents from api_stats
          where "window" = '30d' and api_id in (select jsonb_array_elements_text(?::jsonb))`,
        [json],
      ),
      em.execute<Record<string, unknown>[]>(
        `select api_id, metric from api_ranks where board = 'trending' and scope = 'overall'
            and api_id in (select jsonb_array_elements_text(?::jsonb))`,
        [json],
      ),
    ]);
    const volume = new Map(stats.map((r) => [String(r.api_id), r]));
    const momentum = new Map(ranks.map((r) => [String(r.api_id), r.metric]));
    if (this.cache.size > 200_000) this.cache.clear();
    const out = new Map<string, Scores>();
    for (const id of ids) {
      const m = merit.get(id)!;
      const v = volume.get(id);
      const scores: Scores = {
        svc_score: m.svc_score,
        reliability: m.reliability,
        latency: m.latency,
        usage: m.usage,
        value: m.value,
        freshness: m.freshness,
        calls: clamp(v?.calls, 0, Number.MAX_SAFE_INTEGER, 0),
        gmv_cents: clamp(v?.gmv_cents, 0, Number.MAX_SAFE_INTEGER, 0),
        momentum: clamp(momentum.get(id), -1e9, 1e9, 0),
      };
      this.cache.set(id, { at: now, scores });
      out.set(id, scores);
    }
    return out;
  }
}

function sameScores(a: ReadonlyMap<string, Scores>, b: ReadonlyMap<string, Scores>): boolean {
  if (a.size !== b.size) return false;
  for (const [id, s] of b) {
    const t = a.get(id);
    if (!t) return false;
    for (const k of Object.keys(s) as (keyof Scores)[]) if (s[k] !== t[k]) return false;
  }
  return true;
}
