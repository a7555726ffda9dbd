/**
 * What search sorts by, besides relevance: merit scores and market figures of listings, from the rollup tables the
 * `catalog-rollups` schedule maintains (core/catalog/rollups/rollups.service.ts). Merit comes through `meritFor`
 * (core/catalog/rollups/merit.ts), the one reader of `api_scores` and its neutral defaults; this adds 30-day calls and GMV
 * (`api_stats`) and momentum (the `trending` board's metric in `api_ranks`), 0 when a listing has no row yet.
 * Results are cached for CACHE_MS per process (the rollups refresh every 30 s), and refreshed in the background up
 * to STALE_MS.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { meritFor, neutralMerit } from '../rollups/merit.js';
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

export class ScoresReader {
  private cache = new Map<string, { at: number; scores: Scores }>();

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
