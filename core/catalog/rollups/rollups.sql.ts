/**
 * The SQL of the catalog rollups (rollups.service.ts), one statement per constant: the usage step's hourly buckets
 * and per-window stats, the facts behind scores and boards, their writes, and the market events.
 */

/** Calls in [from, until) per listing, hour and latency bucket. width_bucket(ms - 1, bounds) = index of the first
 * bound >= ms (latencyBucket in rollups.scoring.ts). */
export const HOURLY_BUCKETS_SQL = `select api_id, date_trunc('hour', created_at, 'UTC') as hour,
                width_bucket(latency_ms - 1, ?::int[]) as bucket,
                count(*) as calls,
                count(*) filter (where outcome = 'success') as successes,
                coalesce(sum(cost_cents) filter (where outcome = 'success'), 0) as gmv,
                count(*) filter (where outcome <> 'success' and status between 400 and 499 and status <> 429) as e4,
                count(*) filter (where outcome <> 'success' and (status >= 500 or status = 429)) as e5,
                count(*) filter (where outcome <> 'success' and (status < 400 or status is null)) as et
           from usage_events
          where created_at >= ? and created_at < ? and api_id is not null
          group by 1, 2, 3`;

/** Hourly buckets, each written whole (a touched hour is recomputed from all its calls). */
export const UPSERT_HOURLY_SQL = `insert into api_usage_hourly
             (api_id, hour, calls, successes, gmv_cents, errors_4xx, errors_5xx, errors_timeout, latency_hist)
           select * from jsonb_to_recordset(?::jsonb) as x(api_id varchar, hour timestamptz, calls bigint,
             successes bigint, gmv_cents bigint, errors_4xx bigint, errors_5xx bigint, errors_timeout bigint,
             latency_hist jsonb)
           on conflict (api_id, hour) do update set calls = excluded.calls, successes = excluded.successes,
             gmv_cents = excluded.gmv_cents, errors_4xx = excluded.errors_4xx, errors_5xx = excluded.errors_5xx,
             errors_timeout = excluded.errors_timeout, latency_hist = excluded.latency_hist`;

/** Which orgs called each listing in each hour of [from, until) (unique consumers per window). */
export const INSERT_CONSUMER_HOURS_SQL = `insert into api_consumer_hours (api_id, hour, org_id)
           select distinct api_id, date_trunc('hour', created_at, 'UTC'), org_id from usage_events
            where created_at >= ? and created_at < ? and api_id is not null
           on conflict do nothing`;

/** Every live listing, and every listing with calls in the 30-day window (the hourly full refresh). */
export const STATS_LISTINGS_SQL = `select id from apis where status = 'live'
           union select distinct api_id from api_usage_hourly where hour >= ?`;

/** The usage step's watermark and the hour of its last full refresh. */
export const UPSERT_USAGE_STATE_SQL = `insert into rollup_state (name, watermark, full_hour, updated_at) values ('usage', ?, ?, ?)
         on conflict (name) do update set watermark = excluded.watermark, full_hour = excluded.full_hour,
           updated_at = excluded.updated_at`;

/** Unique consumers per listing over the 24h, 7d and 30d windows. */
export const WINDOW_CONSUMERS_SQL = `select api_id, count(distinct org_id) filter (where hour >= ?) as d1,
              count(distinct org_id) filter (where hour >= ?) as d7, count(distinct org_id) as d30
         from api_consumer_hours where api_id = any(?::varchar[]) and hour >= ? group by api_id`;

/** Per-window stats, replacing the rows of the listings given. */
export const UPSERT_STATS_SQL = `insert into api_stats (api_id, "window", calls, successes, p50_ms, p95_ms, gmv_cents, unique_consumers, errors,
         updated_at)
       select * from jsonb_to_recordset(?::jsonb) as x(api_id varchar, "window" varchar, calls bigint,
         successes bigint, p50_ms int, p95_ms int, gmv_cents bigint, unique_consumers int, errors jsonb,
         updated_at timestamptz)
       on conflict (api_id, "window") do update set calls = excluded.calls, successes = excluded.successes,
         p50_ms = excluded.p50_ms, p95_ms = excluded.p95_ms, gmv_cents = excluded.gmv_cents,
         unique_consumers = excluded.unique_consumers, errors = excluded.errors, updated_at = excluded.updated_at`;

/** The facts scores and boards need, for every live listing. */
export const LISTING_FACTS_SQL = `select a.id as api_id, a.source, a.category, a.slug, a.published_at,
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
        where a.status = 'live'`;

const SCORES_RECORDSET = `jsonb_to_recordset(?::jsonb) as x(api_id varchar, svc_score int, reliability real,
          latency real, usage real, value real, freshness real)`;

/** Current merit scores of the listings given. */
export const UPSERT_SCORES_SQL = `insert into api_scores (api_id, svc_score, reliability, latency, usage, value, freshness, updated_at)
           select x.*, ?::timestamptz from ${SCORES_RECORDSET}
           on conflict (api_id) do update set svc_score = excluded.svc_score, reliability = excluded.reliability,
             latency = excluded.latency, usage = excluded.usage, value = excluded.value,
             freshness = excluded.freshness, updated_at = excluded.updated_at`;

/** Today's history point of each listing's score (rewritten by each run of the day). */
export const UPSERT_SCORE_HISTORY_SQL = `insert into api_score_history (api_id, day, svc_score, reliability, latency, usage, value, freshness)
           select x.api_id, ?::date, x.svc_score, x.reliability, x.latency, x.usage, x.value, x.freshness
             from ${SCORES_RECORDSET}
           on conflict (api_id, day) do update set svc_score = excluded.svc_score,
             reliability = excluded.reliability, latency = excluded.latency, usage = excluded.usage,
             value = excluded.value, freshness = excluded.freshness`;

/** The boards' ranks (the table is emptied first). */
export const INSERT_RANKS_SQL = `insert into api_ranks (api_id, board, scope, rank, metric, updated_at)
           select x.*, ?::timestamptz from jsonb_to_recordset(?::jsonb)
             as x(api_id varchar, board varchar, scope varchar, rank int, metric double precision)`;

/** Market events; an event already written (same id) is kept. */
export const INSERT_EVENTS_SQL = `insert into market_events (id, kind, api_id, data, created_at)
       select * from jsonb_to_recordset(?::jsonb) as x(id varchar, kind text, api_id varchar, data jsonb,
         created_at timestamptz)
       on conflict (id) do nothing`;

/** Endpoints of live listings whose price differs from the price last seen. */
export const PRICE_CHANGES_SQL = `select e.id as endpoint_id, e.api_id, e.method, e.path, e.price_cents, s.price_cents as seen_cents,
                s.updated_at as seen_at
           from endpoints e join apis a on a.id = e.api_id and a.status = 'live'
           join endpoint_prices_seen s on s.endpoint_id = e.id
          where s.price_cents <> e.price_cents`;

/** The prices seen now (a first sighting too), for the next run to compare. */
export const RECORD_PRICES_SEEN_SQL = `insert into endpoint_prices_seen (endpoint_id, api_id, price_cents, updated_at)
         select e.id, e.api_id, e.price_cents, ? from endpoints e join apis a on a.id = e.api_id and a.status = 'live'
         on conflict (endpoint_id) do update set price_cents = excluded.price_cents, updated_at = excluded.updated_at
           where endpoint_prices_seen.price_cents <> excluded.price_cents`;
