/**
 * What search sorts by, besides relevance: merit scores and market figures of listings, read from the rollup tables
 * the scheduled catalog workflows maintain (issue 11 item 6, built elsewhere). This is search's one reader of them;
 * it never writes them.
 *
 * Contract expected (any table may be missing; a missing table or row gives the neutral defaults):
 *
 *   api_scores(api_id varchar(40) pk, svc_score int 0..100,
 *              reliability, latency, usage, value, freshness  real 0..1 (higher is better), updated_at timestamptz)
 *   api_stats(api_id, "window" '24h'|'7d'|'30d', calls bigint, gmv_cents bigint, ...)   -- calls and gmv: 30d row
 *   api_ranks(api_id, board, scope, rank, metric double)  -- momentum: metric of board 'trending', scope 'overall'
 *
 * Neutral defaults: svc_score 50, every part 0.5, calls/gmv/momentum 0: a listing with no evidence ranks mid-table
 * by score and last by volume. Values are clamped to their ranges. Results are cached for CACHE_MS per process (the
 * rollups refresh about once a minute); table presence is re-checked on the same clock.
 */
import type { MikroORM } from '@mikro-orm/postgresql';

export interface Scores {
  svc_score: number;
  reliability: number;
  latency: number;
  usage: number;
  value: number;
  freshness: number;
  calls: number;
  gmv_cents: number;
  momentum: number;
}

export const NEUTRAL_SCORES: Readonly<Scores> = Object.freeze({
  svc_score: 50,
  reliability: 0.5,
  latency: 0.5,
  usage: 0.5,
  value: 0.5,
  freshness: 0.5,
  calls: 0,
  gmv_cents: 0,
  momentum: 0,
});

const CACHE_MS = 10_000;
const clamp = (v: unknown, lo: number, hi: number, dflt: number) => {
  const n = Number(v);
  return Number.isFinite(n) ? Math.min(hi, Math.max(lo, n)) : dflt;
};

export class ScoresReader {
  private tables?: { at: number; scores: boolean; stats: boolean; ranks: boolean };
  private cache = new Map<string, { at: number; scores: Scores }>();

  constructor(private readonly orm: MikroORM) {}

  private async present(now: number) {
    if (this.tables && now - this.tables.at < CACHE_MS) return this.tables;
    const [row] = await this.orm.em
      .fork()
      .execute<{ scores: string | null; stats: string | null; ranks: string | null }[]>(
        `select to_regclass('api_scores')::text as scores, to_regclass('api_stats')::text as stats,
              to_regclass('api_ranks')::text as ranks`,
      );
    this.tables = { at: now, scores: !!row?.scores, stats: !!row?.stats, ranks: !!row?.ranks };
    return this.tables;
  }

  /** Scores of each listing id (neutral defaults where there is no rollup row yet). */
  async scoresFor(apiIds: readonly string[]): Promise<Map<string, Scores>> {
    const now = Date.now();
    const out = new Map<string, Scores>();
    const missing: string[] = [];
    for (const id of apiIds) {
      const hit = this.cache.get(id);
      if (hit && now - hit.at < CACHE_MS) out.set(id, hit.scores);
      else missing.push(id);
    }
    if (!missing.length) return out;
    const tables = await this.present(now);
    const found = new Map<string, Scores>();
    if (tables.scores || tables.stats || tables.ranks) {
      const em = this.orm.em.fork();
      const ids = JSON.stringify(missing);
      const [scores, stats, ranks] = await Promise.all([
        tables.scores
          ? em.execute<Record<string, unknown>[]>(
              `select api_id, svc_score, reliability, latency, usage, value, freshness from api_scores
               where api_id in (select jsonb_array_elements_text(?::jsonb))`,
              [ids],
            )
          : [],
        tables.stats
          ? em.execute<Record<string, unknown>[]>(
              `select api_id, calls, gmv_cents from api_stats
               where "window" = '30d' and api_id in (select jsonb_array_elements_text(?::jsonb))`,
              [ids],
            )
          : [],
        tables.ranks
          ? em.execute<Record<string, unknown>[]>(
              `select api_id, metric from api_ranks where board = 'trending' and scope = 'overall'
               and api_id in (select jsonb_array_elements_text(?::jsonb))`,
              [ids],
            )
          : [],
      ]);
      const get = (id: string) => {
        let s = found.get(id);
        if (!s) found.set(id, (s = { ...NEUTRAL_SCORES }));
        return s;
      };
      for (const r of scores) {
        const s = get(String(r.api_id));
        s.svc_score = Math.round(clamp(r.svc_score, 0, 100, 50));
        for (const k of ['reliability', 'latency', 'usage', 'value', 'freshness'] as const)
          s[k] = clamp(r[k], 0, 1, 0.5);
      }
      for (const r of stats) {
        const s = get(String(r.api_id));
        s.calls = clamp(r.calls, 0, Number.MAX_SAFE_INTEGER, 0);
        s.gmv_cents = clamp(r.gmv_cents, 0, Number.MAX_SAFE_INTEGER, 0);
      }
      for (const r of ranks) get(String(r.api_id)).momentum = clamp(r.metric, -1e9, 1e9, 0);
    }
    for (const id of missing) {
      const s = found.get(id) ?? NEUTRAL_SCORES;
      this.cache.set(id, { at: now, scores: s });
      out.set(id, s);
    }
    if (this.cache.size > 200_000) this.cache.clear();
    return out;
  }
}
