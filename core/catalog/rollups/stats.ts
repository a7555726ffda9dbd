/**
 * A listing's call statistics over a window (24h, 7d, 30d): calls, success rate, p50/p95 latency, GMV, unique
 * consumers and failed calls by class. One reader, `statsFor`:
 *
 * 1. The rollup row, when the scheduled rollup has written one (another module maintains it):
 *      api_stats(api_id varchar(40), "window" varchar(8) ('24h' | '7d' | '30d'), calls bigint, successes bigint,
 *                p50_ms int, p95_ms int, gmv_cents bigint, unique_consumers int,
 *                errors jsonb ({"<class>": count}, classes as ERROR_CLASS_SQL below), updated_at timestamptz,
 *                primary key (api_id, "window"))
 * 2. Else computed from usage_events over [now - window, now), a range scan of the index on (api_id, created_at): a
 *    listing the rollup has not reached yet (just published, or never called) costs one bounded query.
 *
 * `source` says which answered. Latency percentiles are over every call of the window (failed ones too: a timeout is
 * latency the consumer waited); GMV is the cost of successful calls (failed calls are never billed).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ListingStats } from './rollups.schemas.js';

export const STATS_WINDOWS = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
export type StatsWindow = keyof typeof STATS_WINDOWS;

/**
 * Failed calls by class, from the status the gateway records on a failure (the upstream's status, or 0 when no
 * answer came: timeout, connection error, response over the size cap).
 */
export const ERROR_CLASS_SQL = `case
  when status = 429 then 'upstream_rate_limited'
  when status between 500 and 599 then 'upstream_5xx'
  when status between 400 and 499 then 'upstream_4xx'
  else 'no_response' end`;

interface RollupRow {
  calls: string | number;
  successes: string | number;
  p50_ms: number | null;
  p95_ms: number | null;
  gmv_cents: string | number;
  unique_consumers: number;
  errors: Record<string, unknown> | string | null;
  updated_at: Date | string;
}

function rate(successes: number, calls: number): number | null {
  return calls === 0 ? null : Math.round((successes / calls) * 10_000) / 10_000;
}

function errorCounts(raw: Record<string, unknown> | string | null): Record<string, number> {
  const obj: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw;
  const out: Record<string, number> = {};
  if (obj && typeof obj === 'object' && !Array.isArray(obj)) {
    for (const [k, v] of Object.entries(obj)) if (Number.isFinite(Number(v)) && Number(v) > 0) out[k] = Number(v);
  }
  return out;
}

/** The scheduled rollup's row: its window ends when it was written. */
function rollupStats(rollup: RollupRow, window: StatsWindow): ListingStats {
  const calls = Number(rollup.calls);
  const successes = Number(rollup.successes);
  const updated = new Date(rollup.updated_at);
  return {
    window,
    from: new Date(updated.getTime() - STATS_WINDOWS[window]).toISOString(),
    to: updated.toISOString(),
    calls,
    successes,
    success_rate: rate(successes, calls),
    latency_ms: { p50: rollup.p50_ms, p95: rollup.p95_ms },
    gmv_cents: Number(rollup.gmv_cents),
    unique_consumers: Number(rollup.unique_consumers),
    errors: errorCounts(rollup.errors),
    source: 'rollup',
    updated_at: updated.toISOString(),
  };
}

export async function statsFor(
  em: EntityManager,
  apiId: string,
  window: StatsWindow,
  now: Date,
): Promise<ListingStats> {
  const from = new Date(now.getTime() - STATS_WINDOWS[window]);
  const [rollup] = await em.execute<RollupRow[]>(
    `select calls, successes, p50_ms, p95_ms, gmv_cents, unique_consumers, errors, updated_at
       from api_stats where api_id = ? and "window" = ?`,
    [apiId, window],
  );
  if (rollup) return rollupStats(rollup, window);
  return liveStats(em, apiId, window, from, now);
}

/** Computed from usage_events over [from, now): a listing the rollup has not reached yet. */
async function liveStats(
  em: EntityManager,
  apiId: string,
  window: StatsWindow,
  from: Date,
  now: Date,
): Promise<ListingStats> {
  const range = [apiId, from, now];
  const [totals] = await em.execute<
    { calls: string; successes: string; p50: number | null; p95: number | null; gmv: string; consumers: string }[]
  >(
    `select count(*) as calls,
            count(*) filter (where outcome = 'success') as successes,
            percentile_disc(0.5) within group (order by latency_ms) as p50,
            percentile_disc(0.95) within group (order by latency_ms) as p95,
            coalesce(sum(cost_cents) filter (where outcome = 'success'), 0) as gmv,
            count(distinct org_id) as consumers
       from usage_events where api_id = ? and created_at >= ? and created_at < ?`,
    range,
  );
  const errors = await em.execute<{ class: string; n: string }[]>(
    `select ${ERROR_CLASS_SQL} as class, count(*) as n
       from usage_events where api_id = ? and created_at >= ? and created_at < ? and outcome = 'failed'
      group by 1 order by 1`,
    range,
  );
  const calls = Number(totals?.calls ?? 0);
  const successes = Number(totals?.successes ?? 0);
  return {
    window,
    from: from.toISOString(),
    to: now.toISOString(),
    calls,
    successes,
    success_rate: rate(successes, calls),
    latency_ms: {
      p50: totals?.p50 == null ? null : Number(totals.p50),
      p95: totals?.p95 == null ? null : Number(totals.p95),
    },
    gmv_cents: Number(totals?.gmv ?? 0),
    unique_consumers: Number(totals?.consumers ?? 0),
    errors: Object.fromEntries(errors.map((e) => [e.class, Number(e.n)])),
    source: 'live',
    updated_at: now.toISOString(),
  };
}
