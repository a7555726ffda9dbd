/**
 * The catalog rollups, run by catalogRollupsWorkflow on the `catalog-rollups` Temporal Schedule (every 30 s). Each
 * step is one activity and one transaction under a shared advisory lock, so a scheduled run and a run started by hand
 * never interleave, and each is idempotent: it recomputes what it writes from its sources, never adds to it.
 *
 * 1. usage: usage_events since the watermark (minus a 5-minute allowance for late commits) are folded into hourly
 *    buckets, each touched hour recomputed whole; per-window stats are rebuilt for the listings touched, and for
 *    every listing once an hour, when the windows slide.
 * 2. scores: merit scores of every live listing (rollups.scoring.ts) and today's history point.
 * 3. ranks: the six boards, overall and per category; a listing that climbs into a board's top 10 is a `mover`.
 * 4. market events: endpoint prices compared with the prices last seen; a change is a `price_change` event.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../../clock.js';
import type { Logger } from '../../logger.js';
import { pgArray, toDate } from '../../db/sql.js';
import { HOURLY_LATE_ALLOWANCE_MS } from '../../usage/usage-partitions.js';
import type { ErrorCounts, StatsWindow } from '../../../db/entities/index.js';
import {
  BOARDS,
  computeScore,
  emptyHistogram,
  histogramQuantile,
  LATENCY_BOUNDS_MS,
  mergeHistograms,
  boardMetric,
  type Board,
  type BoardInput,
} from './rollups.scoring.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
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
const RETAIN_MS = 35 * DAY;
const WINDOW_HOURS: Record<StatsWindow, number> = { '24h': 24, '7d': 7 * 24, '30d': 30 * 24 };
const LOCK_KEY = 'catalog-rollups';
const MOVER_TOP = 10;

export interface UsageRollupReport {
  from: string;
  watermark: string;
  listings_touched: number;
  full_refresh: boolean;
}

export interface ScoresRollupReport {
  listings_scored: number;
  day: string;
}

export interface RanksRollupReport {
  ranks_written: number;
  movers: number;
}

export interface MarketEventsReport {
  price_changes: number;
}

const floorHour = (d: Date) => new Date(Math.floor(d.getTime() / HOUR) * HOUR);
const utcDay = (d: Date) => d.toISOString().slice(0, 10);

interface HourRow {
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

export class RollupsService {
  constructor(private readonly deps: { orm: MikroORM; clock: Clock; logger: Logger }) {}

  private async locked<T>(fn: (em: EntityManager) => Promise<T>): Promise<T> {
    return this.deps.orm.em.fork().transactional(async (em) => {
      await em.execute(`select pg_advisory_xact_lock(hashtext(?))`, [LOCK_KEY]);
      return fn(em);
    });
  }

  /** Step 1: fold calls since the watermark into hourly buckets and rebuild the stats they change. */
  async rollupUsage(): Promise<UsageRollupReport> {
    return this.locked(async (em) => {
      const now = this.deps.clock.now();
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
      const buckets = await em.execute<
        {
          api_id: string;
          hour: Date;
          bucket: number;
          calls: string;
          successes: string;
          gmv: string;
          e4: string;
          e5: string;
          et: string;
        }[]
      >(
        // width_bucket(ms - 1, bounds) = index of the first bound >= ms (latencyBucket in rollups.scoring.ts).
        `select api_id, date_trunc('hour', created_at, 'UTC') as hour,
                width_bucket(latency_ms - 1, ?::int[]) as bucket,
                count(*) as calls,
                count(*) filter (where outcome = 'success') as successes,
                coalesce(sum(cost_cents) filter (where outcome = 'success'), 0) as gmv,
                count(*) filter (where outcome <> 'success' and status between 400 and 499 and status <> 429) as e4,
                count(*) filter (where outcome <> 'success' and (status >= 500 or status = 429)) as e5,
                count(*) filter (where outcome <> 'success' and (status < 400 or status is null)) as et
           from usage_events
          where created_at >= ? and created_at < ? and api_id is not null
          group by 1, 2, 3`,
        [`{${LATENCY_BOUNDS_MS.join(',')}}`, from, until],
      );
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
      const rows = [...hours.values()];
      if (rows.length) {
        await em.execute(
          `insert into api_usage_hourly
             (api_id, hour, calls, successes, gmv_cents, errors_4xx, errors_5xx, errors_timeout, latency_hist)
           select * from jsonb_to_recordset(?::jsonb) as x(api_id varchar, hour timestamptz, calls bigint,
             successes bigint, gmv_cents bigint, errors_4xx bigint, errors_5xx bigint, errors_timeout bigint,
             latency_hist jsonb)
           on conflict (api_id, hour) do update set calls = excluded.calls, successes = excluded.successes,
             gmv_cents = excluded.gmv_cents, errors_4xx = excluded.errors_4xx, errors_5xx = excluded.errors_5xx,
             errors_timeout = excluded.errors_timeout, latency_hist = excluded.latency_hist`,
          [JSON.stringify(rows.map(({ hist, ...r }) => ({ ...r, latency_hist: hist })))],
        );
        await em.execute(
          `insert into api_consumer_hours (api_id, hour, org_id)
           select distinct api_id, date_trunc('hour', created_at, 'UTC'), org_id from usage_events
            where created_at >= ? and created_at < ? and api_id is not null
           on conflict do nothing`,
          [from, until],
        );
      }
      let ids: string[];
      if (full) {
        await em.execute(`delete from api_usage_hourly where hour < ?`, [new Date(now.getTime() - RETAIN_MS)]);
        await em.execute(`delete from api_consumer_hours where hour < ?`, [new Date(now.getTime() - RETAIN_MS)]);
        // Every live listing gets its rows (zeros without traffic), and every listing with calls in the window.
        const all = await em.execute<{ id: string }[]>(
          `select id from apis where status = 'live'
           union select distinct api_id from api_usage_hourly where hour >= ?`,
          [new Date(currentHour.getTime() - (WINDOW_HOURS['30d'] - 1) * HOUR)],
        );
        ids = all.map((r) => r.id);
      } else {
        ids = [...new Set(rows.map((r) => r.api_id))];
      }
      await this.writeStats(em, ids, currentHour, now);
      await em.execute(
        `insert into rollup_state (name, watermark, full_hour, updated_at) values ('usage', ?, ?, ?)
         on conflict (name) do update set watermark = excluded.watermark, full_hour = excluded.full_hour,
           updated_at = excluded.updated_at`,
        [until, currentHour, now],
      );
      return {
        from: from.toISOString(),
        watermark: until.toISOString(),
        listings_touched: ids.length,
        full_refresh: full,
      };
    });
  }

  private async writeStats(em: EntityManager, ids: string[], currentHour: Date, now: Date): Promise<void> {
    if (ids.length === 0) return;
    const startOf = (w: StatsWindow) => currentHour.getTime() - (WINDOW_HOURS[w] - 1) * HOUR;
    const hours = await em.execute<HourRow[]>(
      `select * from api_usage_hourly where api_id = any(?::varchar[]) and hour >= ?`,
      [pgArray(ids), new Date(startOf('30d'))],
    );
    const consumers = await em.execute<{ api_id: string; d1: string; d7: string; d30: string }[]>(
      `select api_id, count(distinct org_id) filter (where hour >= ?) as d1,
              count(distinct org_id) filter (where hour >= ?) as d7, count(distinct org_id) as d30
         from api_consumer_hours where api_id = any(?::varchar[]) and hour >= ? group by api_id`,
      [new Date(startOf('24h')), new Date(startOf('7d')), pgArray(ids), new Date(startOf('30d'))],
    );
    const uniq = new Map(consumers.map((c) => [c.api_id, { '24h': +c.d1, '7d': +c.d7, '30d': +c.d30 }]));
    const byApi = new Map<string, HourRow[]>();
    for (const h of hours) {
      const list = byApi.get(h.api_id);
      if (list) list.push(h);
      else byApi.set(h.api_id, [h]);
    }
    const out: Record<string, unknown>[] = [];
    for (const id of ids) {
      for (const w of ['24h', '7d', '30d'] as const) {
        const inWindow = (byApi.get(id) ?? []).filter((h) => toDate(h.hour).getTime() >= startOf(w));
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
        out.push({
          api_id: id,
          window: w,
          calls,
          successes,
          p50_ms: histogramQuantile(hist, 0.5),
          p95_ms: histogramQuantile(hist, 0.95),
          gmv_cents: gmv,
          unique_consumers: uniq.get(id)?.[w] ?? 0,
          errors,
          updated_at: now.toISOString(),
        });
      }
    }
    await em.execute(
      `insert into api_stats (api_id, "window", calls, successes, p50_ms, p95_ms, gmv_cents, unique_consumers, errors,
         updated_at)
       select * from jsonb_to_recordset(?::jsonb) as x(api_id varchar, "window" varchar, calls bigint,
         successes bigint, p50_ms int, p95_ms int, gmv_cents bigint, unique_consumers int, errors jsonb,
         updated_at timestamptz)
       on conflict (api_id, "window") do update set calls = excluded.calls, successes = excluded.successes,
         p50_ms = excluded.p50_ms, p95_ms = excluded.p95_ms, gmv_cents = excluded.gmv_cents,
         unique_consumers = excluded.unique_consumers, errors = excluded.errors, updated_at = excluded.updated_at`,
      [JSON.stringify(out)],
    );
  }

  /** The facts scores and boards need, for every live listing. */
  private async listingFacts(em: EntityManager, now: Date) {
    const currentHour = floorHour(now);
    return em.execute<
      {
        api_id: string;
        source: 'provider' | 'directory';
        category: string | null;
        slug: string;
        published_at: Date | string | null;
        changed_at: Date | string;
        gmv_30d: string | null;
        successes_30d: string | null;
        judged_30d: string | null;
        p95_30d: number | null;
        min_price: string | null;
        endpoints: string;
        last_success: Date | string | null;
        calls_7d: string | null;
        calls_prev_7d: string | null;
      }[]
    >(
      `select a.id as api_id, a.source, a.category, a.slug, a.published_at,
              greatest(a.updated_at, coalesce(a.published_at, a.updated_at)) as changed_at,
              s.gmv_cents as gmv_30d, s.successes as successes_30d,
              s.successes + coalesce((s.errors->>'5xx')::bigint, 0) + coalesce((s.errors->>'timeout')::bigint, 0)
                as judged_30d,
              s.p95_ms as p95_30d,
              ep.min_price, coalesce(ep.endpoints, 0) as endpoints,
              h.last_success, h.calls_7d, h.calls_prev_7d
         from apis a
         left join api_stats s on s.api_id = a.id and s."window" = '30d'
         left join (select api_id, coalesce(min(price_cents) filter (where price_cents > 0), 0) as min_price,
                           count(*) as endpoints
                      from endpoints group by api_id) ep on ep.api_id = a.id
         left join (select api_id, max(hour) filter (where successes > 0) as last_success,
                           sum(calls) filter (where hour >= ?) as calls_7d,
                           sum(calls) filter (where hour < ? and hour >= ?) as calls_prev_7d
                      from api_usage_hourly where hour >= ? group by api_id) h on h.api_id = a.id
        where a.status = 'live'`,
      [
        new Date(currentHour.getTime() - (7 * 24 - 1) * HOUR),
        new Date(currentHour.getTime() - (7 * 24 - 1) * HOUR),
        new Date(currentHour.getTime() - (14 * 24 - 1) * HOUR),
        new Date(currentHour.getTime() - 30 * DAY),
      ],
    );
  }

  /** Step 2: merit scores of every live listing, and today's history point (rewritten by each run of the day). */
  async rollupScores(): Promise<ScoresRollupReport> {
    return this.locked(async (em) => {
      const now = this.deps.clock.now();
      const facts = await this.listingFacts(em, now);
      const marketMax = Math.max(0, ...facts.map((f) => Number(f.successes_30d ?? 0)));
      const rows = facts.map((f) => {
        const lastTouch = Math.max(
          toDate(f.changed_at).getTime(),
          f.last_success ? toDate(f.last_success).getTime() + HOUR : 0,
        );
        const parts = computeScore({
          successes: Number(f.successes_30d ?? 0),
          judged: Number(f.judged_30d ?? 0),
          p95Ms: f.p95_30d,
          minPriceCents: Number(f.endpoints) === 0 ? null : Number(f.min_price ?? 0),
          ageDays: Math.max(0, now.getTime() - lastTouch) / DAY,
          marketMaxSuccesses: marketMax,
        });
        return { api_id: f.api_id, ...parts };
      });
      const day = utcDay(now);
      await em.execute(`delete from api_scores where api_id not in (select id from apis where status = 'live')`);
      if (rows.length) {
        const json = JSON.stringify(rows);
        const recordset = `jsonb_to_recordset(?::jsonb) as x(api_id varchar, svc_score int, reliability real,
          latency real, usage real, value real, freshness real)`;
        await em.execute(
          `insert into api_scores (api_id, svc_score, reliability, latency, usage, value, freshness, updated_at)
           select x.*, ?::timestamptz from ${recordset}
           on conflict (api_id) do update set svc_score = excluded.svc_score, reliability = excluded.reliability,
             latency = excluded.latency, usage = excluded.usage, value = excluded.value,
             freshness = excluded.freshness, updated_at = excluded.updated_at`,
          [now, json],
        );
        await em.execute(
          `insert into api_score_history (api_id, day, svc_score, reliability, latency, usage, value, freshness)
           select x.api_id, ?::date, x.svc_score, x.reliability, x.latency, x.usage, x.value, x.freshness
             from ${recordset}
           on conflict (api_id, day) do update set svc_score = excluded.svc_score,
             reliability = excluded.reliability, latency = excluded.latency, usage = excluded.usage,
             value = excluded.value, freshness = excluded.freshness`,
          [day, json],
        );
      }
      return { listings_scored: rows.length, day };
    });
  }

  /** Step 3: the six boards, overall and per category, replaced whole; climbers into a top 10 become movers. */
  async rollupRanks(): Promise<RanksRollupReport> {
    return this.locked(async (em) => {
      const now = this.deps.clock.now();
      const facts = await this.listingFacts(em, now);
      const out: { api_id: string; board: Board; scope: string; rank: number; metric: number }[] = [];
      for (const board of BOARDS) {
        const scored = facts
          .map((f) => {
            const input: BoardInput = {
              source: f.source,
              gmvCents30d: Number(f.gmv_30d ?? 0),
              successes30d: Number(f.successes_30d ?? 0),
              judged30d: Number(f.judged_30d ?? 0),
              calls7d: Number(f.calls_7d ?? 0),
              callsPrev7d: Number(f.calls_prev_7d ?? 0),
              minPriceCents: Number(f.endpoints) === 0 ? null : Number(f.min_price ?? 0),
              publishedDaysAgo: f.published_at ? (now.getTime() - toDate(f.published_at).getTime()) / DAY : null,
            };
            return { f, metric: boardMetric(board, input) };
          })
          .filter((x): x is { f: (typeof facts)[number]; metric: number } => x.metric !== null)
          // Ties: the newer listing first on new_rising, else the slug (stable across runs).
          .sort(
            (a, b) =>
              b.metric - a.metric ||
              (board === 'new_rising'
                ? (b.f.published_at ? toDate(b.f.published_at).getTime() : 0) -
                  (a.f.published_at ? toDate(a.f.published_at).getTime() : 0)
                : 0) ||
              a.f.slug.localeCompare(b.f.slug),
          );
        const perScope = new Map<string, number>();
        for (const { f, metric } of scored) {
          for (const scope of ['overall', ...(f.category ? [`category:${f.category}`] : [])]) {
            const rank = (perScope.get(scope) ?? 0) + 1;
            perScope.set(scope, rank);
            out.push({ api_id: f.api_id, board, scope, rank, metric });
          }
        }
      }
      const before = await em.execute<{ api_id: string; board: string; rank: number }[]>(
        `select api_id, board, rank from api_ranks where scope = 'overall'`,
      );
      const old = new Map(before.map((r) => [`${r.board}|${r.api_id}`, r.rank]));
      const day = utcDay(now);
      const movers = out
        .filter((r) => r.scope === 'overall' && r.rank <= MOVER_TOP)
        .filter((r) => {
          const was = old.get(`${r.board}|${r.api_id}`);
          return was !== undefined && r.rank < was;
        })
        .map((r) => ({
          id: `mover:${r.board}:${r.api_id}:${r.rank}:${day}`,
          kind: 'mover',
          api_id: r.api_id,
          data: { board: r.board, from_rank: old.get(`${r.board}|${r.api_id}`), to_rank: r.rank },
          created_at: now.toISOString(),
        }));
      await em.execute(`delete from api_ranks`);
      if (out.length) {
        await em.execute(
          `insert into api_ranks (api_id, board, scope, rank, metric, updated_at)
           select x.*, ?::timestamptz from jsonb_to_recordset(?::jsonb)
             as x(api_id varchar, board varchar, scope varchar, rank int, metric double precision)`,
          [now, JSON.stringify(out)],
        );
      }
      if (movers.length) await this.insertEvents(em, movers);
      return { ranks_written: out.length, movers: movers.length };
    });
  }

  private async insertEvents(
    em: EntityManager,
    events: { id: string; kind: string; api_id: string; data: unknown; created_at: string }[],
  ): Promise<void> {
    await em.execute(
      `insert into market_events (id, kind, api_id, data, created_at)
       select * from jsonb_to_recordset(?::jsonb) as x(id varchar, kind text, api_id varchar, data jsonb,
         created_at timestamptz)
       on conflict (id) do nothing`,
      [JSON.stringify(events)],
    );
  }

  /** Step 4: endpoint prices of live listings against the prices last seen; each change is one event. */
  async rollupMarketEvents(): Promise<MarketEventsReport> {
    return this.locked(async (em) => {
      const now = this.deps.clock.now();
      const changes = await em.execute<
        {
          endpoint_id: string;
          api_id: string;
          method: string;
          path: string;
          price_cents: string;
          seen_cents: string;
          seen_at: Date | string;
        }[]
      >(
        `select e.id as endpoint_id, e.api_id, e.method, e.path, e.price_cents, s.price_cents as seen_cents,
                s.updated_at as seen_at
           from endpoints e join apis a on a.id = e.api_id and a.status = 'live'
           join endpoint_prices_seen s on s.endpoint_id = e.id
          where s.price_cents <> e.price_cents`,
      );
      if (changes.length) {
        await this.insertEvents(
          em,
          changes.map((c) => ({
            id: `price:${c.endpoint_id}:${toDate(c.seen_at).getTime()}`,
            kind: 'price_change',
            api_id: c.api_id,
            data: {
              method: c.method,
              path: c.path,
              from_price_cents: Number(c.seen_cents),
              to_price_cents: Number(c.price_cents),
            },
            created_at: now.toISOString(),
          })),
        );
      }
      // First sightings are recorded silently: a new listing's prices are part of its publish, not a change.
      await em.execute(
        `insert into endpoint_prices_seen (endpoint_id, api_id, price_cents, updated_at)
         select e.id, e.api_id, e.price_cents, ? from endpoints e join apis a on a.id = e.api_id and a.status = 'live'
         on conflict (endpoint_id) do update set price_cents = excluded.price_cents, updated_at = excluded.updated_at
           where endpoint_prices_seen.price_cents <> excluded.price_cents`,
        [now],
      );
      return { price_changes: changes.length };
    });
  }

  /** When the usage rollup last ran (null before its first run). */
  async watermark(): Promise<Date | null> {
    const [row] = await this.deps.orm.em
      .fork()
      .execute<{ watermark: Date | string }[]>(`select watermark from rollup_state where name = 'usage'`);
    return row ? toDate(row.watermark) : null;
  }
}
