/**
 * Catalog rollups (issue 11), maintained only by the `catalog-rollups` Temporal Schedule (core/catalog/rollups/rollups.service.ts):
 * hourly partial aggregates of usage_events (the incremental layer), per-window stats, merit scores, their daily
 * history, board ranks, and the run's watermark. Read by listing detail, search, boards and the market overview.
 * Column names are a contract with the search and detail code: change them only with them.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const STATS_WINDOWS = ['24h', '7d', '30d'] as const;
export type StatsWindow = (typeof STATS_WINDOWS)[number];

/** Calls failed by class: a 4xx from the upstream, a 5xx (or our 502), no answer (timeout or connect failure). */
export interface ErrorCounts {
  '4xx': number;
  '5xx': number;
  timeout: number;
}

/** One listing's calls in one UTC hour: additive, so any window is a sum of buckets. */
export const ApiUsageHourly = defineEntity({
  name: 'ApiUsageHourly',
  tableName: 'api_usage_hourly',
  properties: {
    apiId: p.string().length(40).primary(),
    hour: p.datetime().primary(),
    calls: p.bigint('number').default(0),
    successes: p.bigint('number').default(0),
    gmvCents: p.bigint('number').default(0),
    errors4xx: p.bigint('number').fieldName('errors_4xx').default(0),
    errors5xx: p.bigint('number').fieldName('errors_5xx').default(0),
    errorsTimeout: p.bigint('number').default(0),
    /** Call counts per latency bucket (bounds in core/catalog/rollups/rollups.scoring.ts), so percentiles merge across hours. */
    latencyHist: p.json<number[]>(),
  },
  indexes: [{ name: 'api_usage_hourly_hour_idx', properties: ['hour'] }],
});
export type IApiUsageHourly = InferEntity<typeof ApiUsageHourly>;

/** Which consumer orgs called a listing in an hour: distinct consumers over any window, without rescanning calls. */
export const ApiConsumerHour = defineEntity({
  name: 'ApiConsumerHour',
  tableName: 'api_consumer_hours',
  properties: {
    apiId: p.string().length(40).primary(),
    hour: p.datetime().primary(),
    orgId: p.string().length(40).primary(),
  },
  indexes: [{ name: 'api_consumer_hours_hour_idx', properties: ['hour'] }],
});
export type IApiConsumerHour = InferEntity<typeof ApiConsumerHour>;

export const ApiStats = defineEntity({
  name: 'ApiStats',
  tableName: 'api_stats',
  properties: {
    apiId: p.string().length(40).primary(),
    window: p.string().length(8).primary(),
    calls: p.bigint('number').default(0),
    successes: p.bigint('number').default(0),
    p50Ms: p.integer().fieldName('p50_ms').nullable(),
    p95Ms: p.integer().fieldName('p95_ms').nullable(),
    gmvCents: p.bigint('number').default(0),
    uniqueConsumers: p.integer().default(0),
    errors: p.json<ErrorCounts>(),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  checks: [
    { name: 'api_stats_window_check', expression: '"window" = \'24h\' OR "window" = \'7d\' OR "window" = \'30d\'' },
  ],
});
export type IApiStats = InferEntity<typeof ApiStats>;

export const ApiScore = defineEntity({
  name: 'ApiScore',
  tableName: 'api_scores',
  properties: {
    apiId: p.string().length(40).primary(),
    svcScore: p.integer(),
    reliability: p.float(),
    latency: p.float(),
    usage: p.float(),
    value: p.float(),
    freshness: p.float(),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ name: 'api_scores_svc_score_idx', properties: ['svcScore'] }],
  checks: [{ name: 'api_scores_svc_score_range', expression: 'svc_score >= 0 AND svc_score <= 100' }],
});
export type IApiScore = InferEntity<typeof ApiScore>;

/** One point per listing per UTC day: the day's latest scores (rewritten by each run of that day). */
export const ApiScoreHistory = defineEntity({
  name: 'ApiScoreHistory',
  tableName: 'api_score_history',
  properties: {
    apiId: p.string().length(40).primary(),
    day: p.date().primary(),
    svcScore: p.integer(),
    reliability: p.float(),
    latency: p.float(),
    usage: p.float(),
    value: p.float(),
    freshness: p.float(),
  },
});
export type IApiScoreHistory = InferEntity<typeof ApiScoreHistory>;

export const ApiRank = defineEntity({
  name: 'ApiRank',
  tableName: 'api_ranks',
  properties: {
    apiId: p.string().length(40).primary(),
    board: p.string().length(32).primary(),
    /** `overall` or `category:<slug>`. */
    scope: p.string().length(80).primary(),
    rank: p.integer(),
    metric: p.double(),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ name: 'api_ranks_board_scope_rank_idx', properties: ['board', 'scope', 'rank'] }],
});
export type IApiRank = InferEntity<typeof ApiRank>;

/** Progress of a rollup: usage up to `watermark` is folded in; `fullHour` is the hour of the last full refresh. */
export const RollupState = defineEntity({
  name: 'RollupState',
  tableName: 'rollup_state',
  properties: {
    name: p.string().length(40).primary(),
    watermark: p.datetime(),
    fullHour: p.datetime().nullable(),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
});
export type IRollupState = InferEntity<typeof RollupState>;

/** The last price the rollups saw per endpoint: a difference becomes a `price_change` market event. */
export const EndpointPriceSeen = defineEntity({
  name: 'EndpointPriceSeen',
  tableName: 'endpoint_prices_seen',
  properties: {
    endpointId: p.string().length(40).primary(),
    apiId: p.string().length(40),
    priceCents: p.bigint('number'),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
});
export type IEndpointPriceSeen = InferEntity<typeof EndpointPriceSeen>;

export const MARKET_EVENT_KINDS = ['price_change', 'mover'] as const;
export type MarketEventKind = (typeof MARKET_EVENT_KINDS)[number];

/** Public market happenings the rollups detect (price changes, board movers); keyed so a rerun adds nothing. */
export const MarketEvent = defineEntity({
  name: 'MarketEvent',
  tableName: 'market_events',
  properties: {
    id: p.string().length(120).primary(),
    kind: p.enum([...MARKET_EVENT_KINDS]),
    apiId: p.string().length(40),
    data: p.json<Record<string, unknown>>(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ name: 'market_events_created_idx', properties: ['createdAt'] }],
});
export type IMarketEvent = InferEntity<typeof MarketEvent>;
