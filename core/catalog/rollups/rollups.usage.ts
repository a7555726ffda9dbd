/**
 * Step 1 of the catalog rollups (rollups.service.ts), usage: which calls a run folds in, their hourly buckets, and a
 * stats window's totals from those buckets.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { toDate } from '../../db/sql.js';
import { HOURLY_LATE_ALLOWANCE_MS } from '../../usage/usage-partitions.js';
import type { ErrorCounts } from '../../../db/entities/index.js';
import { emptyHistogram, LATENCY_BOUNDS_MS, mergeHistograms } from './rollups.scoring.js';
import { HOURLY_BUCKETS_SQL, INSERT_CONSUMER_HOURS_SQL, UPSERT_HOURLY_SQL } from './rollups.sql.js';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
/** How far before the watermark each run looks again, for calls committed late (the gateway drains within ~1 s). */
export const LATE_ALLOWANCE_MS = 5 * 60_000;
/**
 * Most usage one run folds in. Measured on Postgres 15 (2 shared cores, 10k live listings, 300k calls over 30 days
 * on 500 of them): all 30 days in one run took 15 s; three days per run take 0.5–4 s, so a backfill is done in
 * 12 runs (6 minutes), each well inside the activity timeout. Steady state: ~0.3–0.8 s for usage, ~0.5 s each for
 * scores and ranks.
 */
export const MAX_SCAN_MS = 3 * 24 * HOUR;
/** Hourly buckets and consumer sets older than this are pruned (the longest window is 30 days). */
export const RETAIN_MS = 35 * DAY;
export const floorHour = (d: Date) => new Date(Math.floor(d.getTime() / HOUR) * HOUR);

export interface HourRow {
  api_id: string;
  hour: Date | string;
  calls: string;
  successes: string;
  gmv_cents: string;
  errors_4xx: string;
  errors_5xx: string;
  errors_timeout: string;
  latency_hist: number[] | string;
}

/**
 * Which calls this run folds in: from the first call since the watermark (less the late allowance) for at most
 * MAX_SCAN_MS; `full` once an hour, when every listing's stats are rebuilt.
 */
export async function usageScanRange(em: EntityManager, now: Date) {
  const [state] = await em.execute<{ watermark: Date | string; full_hour: Date | string | null }[]>(
    `select watermark, full_hour from rollup_state where name = 'usage'`,
  );
  const currentHour = floorHour(now);
  // Once an hour (the windows slide) every listing's stats are rebuilt, and the scan reaches further back.
  const full = !state?.full_hour || toDate(state.full_hour).getTime() !== currentHour.getTime();
  // A watermark ahead of the clock (the clock was set back) must not hide the calls in between.
  const allowance = full ? HOURLY_LATE_ALLOWANCE_MS : LATE_ALLOWANCE_MS;
  const since = state
    ? new Date(Math.min(toDate(state.watermark).getTime(), now.getTime()) - allowance)
    : new Date(now.getTime() - RETAIN_MS);
  // Start at the first call since then (an index probe), so quiet stretches cost nothing.
  const [first] = await em.execute<{ first: Date | string | null }[]>(
    `select min(created_at) as first from usage_events where created_at >= ?`,
    [since],
  );
  const from = floorHour(first?.first ? new Date(Math.max(since.getTime(), toDate(first.first).getTime())) : now);
  // A backfill (first run, or after a long stop) advances at most MAX_SCAN_MS per run, within the activity timeout.
  const until = new Date(Math.min(now.getTime(), from.getTime() + MAX_SCAN_MS));
  return { full, from, until, currentHour };
}

/** Recomputes the hourly buckets (and consumer hours) of the calls in [from, until); returns the buckets written. */
export async function foldHours(em: EntityManager, from: Date, until: Date): Promise<HourRow[]> {
  const buckets = await em.execute<HourBucket[]>(HOURLY_BUCKETS_SQL, [`{${LATENCY_BOUNDS_MS.join(',')}}`, from, until]);
  const rows = [...hourRows(buckets).values()];
  if (rows.length) {
    await em.execute(UPSERT_HOURLY_SQL, [JSON.stringify(rows.map(({ hist, ...r }) => ({ ...r, latency_hist: hist })))]);
    await em.execute(INSERT_CONSUMER_HOURS_SQL, [from, until]);
  }
  return rows;
}

interface HourBucket {
  api_id: string;
  hour: Date;
  bucket: number;
  calls: string;
  successes: string;
  gmv: string;
  e4: string;
  e5: string;
  et: string;
}

/** The latency buckets of each (listing, hour), summed into one hourly row with its histogram. */
function hourRows(buckets: HourBucket[]): Map<string, HourRow & { hist: number[] }> {
  const hours = new Map<string, HourRow & { hist: number[] }>();
  for (const b of buckets) {
    const key = `${b.api_id}|${toDate(b.hour).toISOString()}`;
    let row = hours.get(key);
    if (!row) {
      row = {
        api_id: b.api_id,
        hour: toDate(b.hour),
        calls: '0',
        successes: '0',
        gmv_cents: '0',
        errors_4xx: '0',
        errors_5xx: '0',
        errors_timeout: '0',
        latency_hist: [],
        hist: emptyHistogram(),
      };
      hours.set(key, row);
    }
    row.calls = String(Number(row.calls) + Number(b.calls));
    row.successes = String(Number(row.successes) + Number(b.successes));
    row.gmv_cents = String(Number(row.gmv_cents) + Number(b.gmv));
    row.errors_4xx = String(Number(row.errors_4xx) + Number(b.e4));
    row.errors_5xx = String(Number(row.errors_5xx) + Number(b.e5));
    row.errors_timeout = String(Number(row.errors_timeout) + Number(b.et));
    row.hist[Math.min(Number(b.bucket), LATENCY_BOUNDS_MS.length)]! += Number(b.calls);
  }
  return hours;
}

/** A window's totals from its hourly rows. */
export function windowTotals(inWindow: HourRow[]) {
  const hist = emptyHistogram();
  const errors: ErrorCounts = { '4xx': 0, '5xx': 0, timeout: 0 };
  let calls = 0;
  let successes = 0;
  let gmv = 0;
  for (const h of inWindow) {
    calls += Number(h.calls);
    successes += Number(h.successes);
    gmv += Number(h.gmv_cents);
    errors['4xx'] += Number(h.errors_4xx);
    errors['5xx'] += Number(h.errors_5xx);
    errors.timeout += Number(h.errors_timeout);
    mergeHistograms(
      hist,
      typeof h.latency_hist === 'string' ? (JSON.parse(h.latency_hist) as number[]) : h.latency_hist,
    );
  }
  return { calls, successes, gmv, errors, hist };
}
