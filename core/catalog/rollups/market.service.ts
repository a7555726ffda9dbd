/**
 * Boards and the market view (issue 11, item 5): read-only over the rollup tables the `catalog-rollups` schedule
 * maintains (core/catalog/rollups/rollups.service.ts), so every read is an index lookup, fresh within one run (30 s).
 * Nothing private leaves here: no org ids, emails or consumer names; providers are shown by their public profile.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import type { Clock } from '../../clock.js';
import { BOARD_METRICS, BOARDS, type Board } from './rollups.scoring.js';
import { toDate } from '../../db/sql.js';
import type { ActivityItem, Leaderboard, ListingSummary, MarketOverview } from './rollups.schemas.js';

export const LeaderboardQuery = z
  .object({
    category: z.string().trim().min(1).max(64).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(50),
  })
  .strict();
export type LeaderboardQuery = z.infer<typeof LeaderboardQuery>;

export const ActivityQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) }).strict();
export type ActivityQuery = z.infer<typeof ActivityQuery>;

const HOUR = 3_600_000;

export function parseBoard(board: string): Board {
  if ((BOARDS as readonly string[]).includes(board)) return board as Board;
  throw new ValidationError(`Unknown board "${board.slice(0, 64)}": use one of ${BOARDS.join(', ')}.`, {
    details: { boards: [...BOARDS] },
  });
}

interface SummaryRow {
  slug: string;
  name: string;
  summary: string;
  category_slug: string | null;
  category_name: string | null;
  provider_slug: string | null;
  provider_name: string | null;
}

const SUMMARY_COLUMNS = `a.slug, a.name, a.summary, a.category as category_slug, c.name as category_name,
  pr.slug as provider_slug, pr.display_name as provider_name`;
const SUMMARY_JOINS = `left join categories c on c.slug = a.category left join profiles pr on pr.org_id = a.org_id`;

function summaryOf(r: SummaryRow): ListingSummary {
  return {
    slug: r.slug,
    name: r.name,
    summary: r.summary,
    category: r.category_slug ? { slug: r.category_slug, name: r.category_name ?? r.category_slug } : null,
    provider: { slug: r.provider_slug, name: r.provider_name },
  };
}

/** A market event the rollups recorded (rollups.service.ts writes its `data`). */
type EventRow = SummaryRow & { at: Date | string } & (
    | { kind: 'price_change'; data: { method: string; path: string; from_price_cents: number; to_price_cents: number } }
    | { kind: 'mover'; data: { board: string; from_rank: number; to_rank: number } }
  );

function eventItem(r: EventRow): ActivityItem {
  const base = {
    at: toDate(r.at).toISOString(),
    api: { slug: r.slug, name: r.name },
    provider: { slug: r.provider_slug, name: r.provider_name },
  };
  // One branch per kind: TypeScript pairs each kind with its data only once it is narrowed.
  return r.kind === 'mover' ? { kind: r.kind, ...base, ...r.data } : { kind: r.kind, ...base, ...r.data };
}

export class MarketService {
  constructor(private readonly deps: { orm: MikroORM; clock: Clock }) {}

  async leaderboard(boardName: string, query: LeaderboardQuery): Promise<Leaderboard> {
    const board = parseBoard(boardName);
    const em = this.deps.orm.em.fork();
    let scope = 'overall';
    if (query.category) {
      const [known] = await em.execute<{ slug: string }[]>(`select slug from categories where slug = ?`, [
        query.category,
      ]);
      if (!known) {
        throw new ValidationError(`Unknown category "${query.category}": see GET /v1/categories.`, {
          details: { field: 'category' },
        });
      }
      scope = `category:${known.slug}`;
    }
    const rows = await em.execute<(SummaryRow & { rank: number; metric: number })[]>(
      `select r.rank, r.metric, ${SUMMARY_COLUMNS}
         from api_ranks r join apis a on a.id = r.api_id and a.status = 'live' ${SUMMARY_JOINS}
        where r.board = ? and r.scope = ? order by r.rank limit ?`,
      [board, scope, query.limit],
    );
    const metric = BOARD_METRICS[board];
    return {
      board,
      metric,
      items: rows.map((r) => ({ rank: r.rank, ...summaryOf(r), metric: { name: metric, value: Number(r.metric) } })),
    };
  }

  async overview(): Promise<MarketOverview> {
    const em = this.deps.orm.em.fork();
    const now = this.deps.clock.now();
    const hour = Math.floor(now.getTime() / HOUR) * HOUR;
    const since24 = new Date(hour - 23 * HOUR);
    const since7d = new Date(hour - (7 * 24 - 1) * HOUR);
    const [listings] = await em.execute<{ live: string; providers: string; categories: string }[]>(
      `select count(*) as live, count(distinct org_id) as providers, count(distinct category) as categories
         from apis where status = 'live'`,
    );
    const [usage] = await em.execute<{ c24: string; c7: string; g24: string; g7: string }[]>(
      `select coalesce(sum(calls) filter (where hour >= ?), 0) as c24, coalesce(sum(calls), 0) as c7,
              coalesce(sum(gmv_cents) filter (where hour >= ?), 0) as g24, coalesce(sum(gmv_cents), 0) as g7
         from api_usage_hourly where hour >= ?`,
      [since24, since24, since7d],
    );
    const [consumers] = await em.execute<{ a24: string; a7: string }[]>(
      `select count(distinct org_id) filter (where hour >= ?) as a24, count(distinct org_id) as a7
         from api_consumer_hours where hour >= ?`,
      [since24, since7d],
    );
    const [price] = await em.execute<{ median: string | null }[]>(
      `select percentile_disc(0.5) within group (order by e.price_cents) as median
         from endpoints e join apis a on a.id = e.api_id and a.status = 'live'`,
    );
    const [state] = await em.execute<{ watermark: Date | string }[]>(
      `select watermark from rollup_state where name = 'usage'`,
    );
    return {
      live_apis: Number(listings?.live ?? 0),
      providers: Number(listings?.providers ?? 0),
      categories: Number(listings?.categories ?? 0),
      calls_24h: Number(usage?.c24 ?? 0),
      calls_7d: Number(usage?.c7 ?? 0),
      gmv_cents_24h: Number(usage?.g24 ?? 0),
      gmv_cents_7d: Number(usage?.g7 ?? 0),
      active_consumers_24h: Number(consumers?.a24 ?? 0),
      active_consumers_7d: Number(consumers?.a7 ?? 0),
      median_price_cents: price?.median == null ? null : Number(price.median),
      updated_at: state ? toDate(state.watermark).toISOString() : null,
    };
  }

  /**
   * The public feed, newest first: publishes and new providers (from the listings themselves), price changes and
   * board movers (events the rollups recorded). Directory imports are left out (a bulk import is not news).
   */
  async activity(query: ActivityQuery): Promise<ActivityItem[]> {
    const em = this.deps.orm.em.fork();
    const limit = query.limit;
    const publishes = await em.execute<(SummaryRow & { at: Date | string })[]>(
      `select a.published_at as at, ${SUMMARY_COLUMNS} from apis a ${SUMMARY_JOINS}
        where a.status = 'live' and a.source = 'provider' and a.published_at is not null
        order by a.published_at desc limit ?`,
      [limit],
    );
    const providers = await em.execute<
      {
        at: Date | string;
        org_id: string;
        slug: string;
        name: string;
        provider_slug: string | null;
        provider_name: string | null;
      }[]
    >(
      `select f.at, f.org_id, a.slug, a.name, pr.slug as provider_slug, pr.display_name as provider_name
         from (select distinct on (org_id) org_id, id, published_at as at from apis
                where status = 'live' and source = 'provider' and published_at is not null
                order by org_id, published_at asc) f
         join apis a on a.id = f.id left join profiles pr on pr.org_id = f.org_id
        order by f.at desc limit ?`,
      [limit],
    );
    const events = await em.execute<EventRow[]>(
      `select m.created_at as at, m.kind, m.data, ${SUMMARY_COLUMNS}
         from market_events m join apis a on a.id = m.api_id and a.status = 'live' ${SUMMARY_JOINS}
        order by m.created_at desc, m.id limit ?`,
      [limit],
    );
    const items: ActivityItem[] = [
      ...publishes.map((r) => ({
        kind: 'publish' as const,
        at: toDate(r.at).toISOString(),
        api: { slug: r.slug, name: r.name },
        provider: { slug: r.provider_slug, name: r.provider_name },
        category: r.category_slug,
      })),
      ...providers.map((r) => ({
        kind: 'new_provider' as const,
        at: toDate(r.at).toISOString(),
        api: { slug: r.slug, name: r.name },
        provider: { slug: r.provider_slug, name: r.provider_name },
      })),
      ...events.map(eventItem),
    ];
    return items.sort((a, b) => b.at.localeCompare(a.at) || a.kind.localeCompare(b.kind)).slice(0, limit);
  }
}
