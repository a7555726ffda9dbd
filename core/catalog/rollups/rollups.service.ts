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
import type { StatsWindow } from '../../../db/entities/index.js';
import {
  BOARDS,
  computeScore,
  histogramQuantile,
  boardMetric,
  type Board,
  type BoardInput,
} from './rollups.scoring.js';
import {
  INSERT_EVENTS_SQL,
  INSERT_RANKS_SQL,
  LISTING_FACTS_SQL,
  PRICE_CHANGES_SQL,
  RECORD_PRICES_SEEN_SQL,
  STATS_LISTINGS_SQL,
  UPSERT_SCORE_HISTORY_SQL,
  UPSERT_SCORES_SQL,
  UPSERT_STATS_SQL,
  UPSERT_USAGE_STATE_SQL,
  WINDOW_CONSUMERS_SQL,
} from './rollups.sql.js';
import {
  DAY,
  floorHour,
  HOUR,
  type HourRow,
  RETAIN_MS,
  usageScanRange,
  foldHours,
  windowTotals,
} from './rollups.usage.js';

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

const utcDay = (d: Date) => d.toISOString().slice(0, 10);

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
      const { full, from, until, currentHour } = await usageScanRange(em, now);
      const rows = await foldHours(em, from, until);
      let ids: string[];
      if (full) {
        await em.execute(`delete from api_usage_hourly where hour < ?`, [new Date(now.getTime() - RETAIN_MS)]);
        await em.execute(`delete from api_consumer_hours where hour < ?`, [new Date(now.getTime() - RETAIN_MS)]);
        // Every live listing gets its rows (zeros without traffic), and every listing with calls in the window.
        const all = await em.execute<{ id: string }[]>(STATS_LISTINGS_SQL, [
          new Date(currentHour.getTime() - (WINDOW_HOURS['30d'] - 1) * HOUR),
        ]);
        ids = all.map((r) => r.id);
      } else {
        ids = [...new Set(rows.map((r) => r.api_id))];
      }
      await this.writeStats(em, ids, currentHour, now);
      await em.execute(UPSERT_USAGE_STATE_SQL, [until, currentHour, now]);
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
      WINDOW_CONSUMERS_SQL,
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
        const { calls, successes, gmv, errors, hist } = windowTotals(inWindow);
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
    await em.execute(UPSERT_STATS_SQL, [JSON.stringify(out)]);
  }

  /** The facts scores and boards need, for every live listing. */
  private async listingFacts(em: EntityManager, now: Date): Promise<ListingFacts[]> {
    const currentHour = floorHour(now);
    return em.execute<ListingFacts[]>(LISTING_FACTS_SQL, [
      new Date(currentHour.getTime() - (7 * 24 - 1) * HOUR),
      new Date(currentHour.getTime() - (7 * 24 - 1) * HOUR),
      new Date(currentHour.getTime() - (14 * 24 - 1) * HOUR),
      new Date(currentHour.getTime() - 30 * DAY),
    ]);
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
        await em.execute(UPSERT_SCORES_SQL, [now, json]);
        await em.execute(UPSERT_SCORE_HISTORY_SQL, [day, json]);
      }
      return { listings_scored: rows.length, day };
    });
  }

  /** Step 3: the six boards, overall and per category, replaced whole; climbers into a top 10 become movers. */
  async rollupRanks(): Promise<RanksRollupReport> {
    return this.locked(async (em) => {
      const now = this.deps.clock.now();
      const facts = await this.listingFacts(em, now);
      const out: RankRow[] = [];
      for (const board of BOARDS) out.push(...boardRanks(board, facts, now));
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
      if (out.length) await em.execute(INSERT_RANKS_SQL, [now, JSON.stringify(out)]);
      if (movers.length) await this.insertEvents(em, movers);
      return { ranks_written: out.length, movers: movers.length };
    });
  }

  private async insertEvents(
    em: EntityManager,
    events: { id: string; kind: string; api_id: string; data: unknown; created_at: string }[],
  ): Promise<void> {
    await em.execute(INSERT_EVENTS_SQL, [JSON.stringify(events)]);
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
      >(PRICE_CHANGES_SQL);
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
      await em.execute(RECORD_PRICES_SEEN_SQL, [now]);
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

/** The facts scores and boards need, for one live listing. */
interface ListingFacts {
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
}

interface RankRow {
  api_id: string;
  board: Board;
  scope: string;
  rank: number;
  metric: number;
}

/** One board's ranks, overall and in the listing's category, best first. */
function boardRanks(board: Board, facts: ListingFacts[], now: Date): RankRow[] {
  const out: RankRow[] = [];
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
    .filter((x): x is { f: ListingFacts; metric: number } => x.metric !== null)
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
  return out;
}
