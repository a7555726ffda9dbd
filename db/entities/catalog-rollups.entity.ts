/**
 * Catalog rollups (issue 11), maintained only by the `catalog-rollups` Temporal Schedule (core/catalog/rollups/rollups.service.ts):
 * hourly partial aggregates of usage_events (the incremental layer), per-window stats, merit scores, their daily
 * history, board ranks, and the run's watermark. Read by listing detail, search, boards and the market overview.
 * Column names are a contract with the search and detail code: change them only with them.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { cents, dbNow, idRef } from './common.js';

export const STATS_WINDOWS = ['24h', '7d', '30d'] as const;
export type StatsWindow = (typeof STATS_WINDOWS)[number];

/** Calls failed by class: a 4xx from the upstream, a 5xx (or our 502), no answer (timeout or connect failure). */
export interface ErrorCounts {
  '4xx': number;
  '5xx': number;
  timeout: number;
}

/** A counter of calls, summed by the rollups. */
const count = () => p.bigint('number').default(0);

/** The key of a listing's hourly bucket. */
const listingHour = () => ({
  apiId: idRef().primary(),
  hour: p.datetime().primary(),
});

/** A listing's merit: the 0–100 score and the components it is made of. */
const scores = () => ({
  svcScore: p.integer(),
  reliability: p.float(),
  latency: p.float(),
  usage: p.float(),
  value: p.float(),
  freshness: p.float(),
});

/** One listing's calls in one UTC hour: additive, so any window is a sum of buckets. */
export const ApiUsageHourly = defineEntity({
  name: 'ApiUsageHourly',
  tableName: 'api_usage_hourly',
  properties: {
    ...listingHour(),
    calls: count(),
    successes: count(),
    gmvCents: cents().default(0),
    errors4xx: count().fieldName('errors_4xx'),
    errors5xx: count().fieldName('errors_5xx'),
    errorsTimeout: count(),
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
    ...listingHour(),
    orgId: idRef().primary(),
  },
  indexes: [{ name: 'api_consumer_hours_hour_idx', properties: ['hour'] }],
});
export type IApiConsumerHour = InferEntity<typeof ApiConsumerHour>;

export const ApiStats = defineEntity({
  name: 'ApiStats',
  tableName: 'api_stats',
  properties: {
    apiId: idRef().primary(),
    window: p.string().length(8).primary(),
    calls: count(),
    successes: count(),
    p50Ms: p.integer().fieldName('p50_ms').nullable(),
    p95Ms: p.integer().fieldName('p95_ms').nullable(),
    gmvCents: cents().default(0),
    uniqueConsumers: p.integer().default(0),
    errors: p.json<ErrorCounts>(),
    updatedAt: dbNow(),
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
    apiId: idRef().primary(),
    ...scores(),
    updatedAt: dbNow(),
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
    apiId: idRef().primary(),
    day: p.date().primary(),
    ...scores(),
  },
});
export type IApiScoreHistory = InferEntity<typeof ApiScoreHistory>;

export const ApiRank = defineEntity({
  name: 'ApiRank',
  tableName: 'api_ranks',
  properties: {
    apiId: idRef().primary(),
    board: p.string().length(32).primary(),
    /** `overall` or `category:<slug>`. */
    scope: p.string().length(80).primary(),
    rank: p.integer(),
    metric: p.double(),
    updatedAt: dbNow(),
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
    updatedAt: dbNow(),
  },
});
export type IRollupState = InferEntity<typeof RollupState>;

/** The last price the rollups saw per endpoint: a difference becomes a `price_change` market event. */
export const EndpointPriceSeen = defineEntity({
  name: 'EndpointPriceSeen',
  tableName: 'endpoint_prices_seen',
  properties: {
    endpointId: idRef().primary(),
    apiId: idRef(),
    priceCents: cents(),
    updatedAt: dbNow(),
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
    apiId: idRef(),
    data: p.json<Record<string, unknown>>(),
    createdAt: dbNow(),
  },
  indexes: [{ name: 'market_events_created_idx', properties: ['createdAt'] }],
});
export type IMarketEvent = InferEntity<typeof MarketEvent>;
