/**
 * Response shapes of what the rollups answer (the OpenAPI document and the agent tools share them): a listing's merit
 * (merit.ts), stats (stats.ts), score history and ranks (rollup-reads.ts); the boards, the market totals and the
 * activity feed (market.service.ts).
 */
import { z } from 'zod';
import { STATS_WINDOWS } from '../../../db/entities/index.js';
import { BOARDS } from './rollups.scoring.js';

/** A listing's category as its listings name it. */
export const CategoryRef = z.object({ slug: z.string(), name: z.string() });
/** A listing's provider: its public profile's slug and name (null while the org has no public profile). */
export const ProviderRef = z.object({ slug: z.string().nullable(), name: z.string().nullable() });

const Part = z.number().min(0).max(1);
/** The merit parts of a listing, each 0..1 (higher is better). */
export const MeritParts = z.object({ reliability: Part, latency: Part, usage: Part, value: Part, freshness: Part });
export type MeritParts = z.infer<typeof MeritParts>;
/** The listing's merit (merit.ts): `svc_score` 0..100 and its parts; neutral defaults with `rated: false`. */
export const Merit = MeritParts.extend({
  svc_score: z.number().int().min(0).max(100),
  rated: z.boolean().describe('False until the rollup has scored the listing (the values are neutral defaults).'),
  updated_at: z.string().nullable(),
});
export type Merit = z.infer<typeof Merit>;

/** One board rank of a listing (rollup-reads.ts ranksFor). */
export const RankView = z.object({
  board: z.string(),
  scope: z.enum(['overall', 'category']),
  category: z.string().nullable().describe('The category’s slug for a category rank, else null.'),
  rank: z.number().int().nullable().describe('Null while the listing is not on this board.'),
  board_size: z.number().int().describe('How many listings this board ranks in this scope.'),
  metric: z.number().nullable(),
  updated_at: z.string().nullable(),
});
export type RankView = z.infer<typeof RankView>;

/** One daily score point (rollup-reads.ts historyFor: the day, the score and its merit parts). */
export const HistoryPointView = MeritParts.extend({ day: z.string(), svc_score: z.number().int() });
export type HistoryPointView = z.infer<typeof HistoryPointView>;

/** GET /v1/apis/{slug}/stats (stats.ts): calls, success rate, latency, GMV and failures over a window. */
export const ListingStats = z.object({
  window: z.enum(STATS_WINDOWS),
  from: z.string(),
  to: z.string(),
  calls: z.number().int(),
  successes: z.number().int(),
  success_rate: z.number().nullable().describe('successes / calls, 4 decimals; null without calls.'),
  latency_ms: z.object({ p50: z.number().nullable(), p95: z.number().nullable() }),
  gmv_cents: z.number().int(),
  unique_consumers: z.number().int(),
  errors: z
    .record(z.string(), z.number().int())
    .describe('Failed calls by class: upstream_rate_limited, upstream_5xx, upstream_4xx, no_response.'),
  source: z.enum(['rollup', 'live']).describe('The scheduled rollup’s row, or computed from the calls now.'),
  updated_at: z.string(),
});
export type ListingStats = z.infer<typeof ListingStats>;

/** A live listing as the boards show it. */
export const ListingSummary = z.object({
  slug: z.string(),
  name: z.string(),
  summary: z.string(),
  category: CategoryRef.nullable(),
  provider: ProviderRef,
});
export type ListingSummary = z.infer<typeof ListingSummary>;

/** One ranked listing of GET /v1/leaderboards/{board}: its rank and the board's metric for it. */
export const BoardItem = ListingSummary.extend({
  rank: z.number().int(),
  metric: z.object({ name: z.string(), value: z.number() }),
});
export type BoardItem = z.infer<typeof BoardItem>;

/** A board (market.service.ts `leaderboard`): its name, the metric it ranks by, its listings best first. */
export const Leaderboard = z.object({ board: z.enum(BOARDS), metric: z.string(), items: z.array(BoardItem) });
export type Leaderboard = z.infer<typeof Leaderboard>;

/** The envelope `meta` of GET /v1/leaderboards/{board}: the board and the metric it ranks by. */
export const LeaderboardMeta = z.looseObject({
  request_id: z.string(),
  ...Leaderboard.pick({ board: true, metric: true }).shape,
});

/** GET /v1/market/overview: the market's totals (24 h and 7 days are whole hours up to now). */
export const MarketOverview = z.object({
  live_apis: z.number().int(),
  providers: z.number().int(),
  categories: z.number().int(),
  calls_24h: z.number().int(),
  calls_7d: z.number().int(),
  gmv_cents_24h: z.number().int(),
  gmv_cents_7d: z.number().int(),
  active_consumers_24h: z.number().int(),
  active_consumers_7d: z.number().int(),
  median_price_cents: z.number().int().nullable().describe('Over the endpoints of live listings; null without any.'),
  updated_at: z.string().nullable().describe('How far the usage rollup has counted; null before its first run.'),
});
export type MarketOverview = z.infer<typeof MarketOverview>;

/** What every activity item carries. */
const ActivityBase = {
  at: z.string(),
  api: z.object({ slug: z.string(), name: z.string() }),
  provider: ProviderRef,
};

/** One item of GET /v1/market/activity: a publish, a new provider, a price change or a board mover. */
export const ActivityItem = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('publish'), ...ActivityBase, category: z.string().nullable() }),
  z.object({ kind: z.literal('new_provider'), ...ActivityBase }),
  z.object({
    kind: z.literal('price_change'),
    ...ActivityBase,
    method: z.string(),
    path: z.string(),
    from_price_cents: z.number().int(),
    to_price_cents: z.number().int(),
  }),
  z.object({
    kind: z.literal('mover'),
    ...ActivityBase,
    board: z.string(),
    from_rank: z.number().int(),
    to_rank: z.number().int(),
  }),
]);
export type ActivityItem = z.infer<typeof ActivityItem>;
