import { Migration } from '@mikro-orm/migrations';

/**
 * Rollups, leaderboards, market and demand (issue 11): hourly usage buckets and consumer sets (the incremental layer),
 * per-window stats, merit scores and their daily history, board ranks, the rollup watermark, the prices last seen and
 * the market events derived from them; requests for missing APIs and their votes; an index on usage_events.created_at
 * for the rollup's range scan since its watermark.
 */
export class Migration20261123120200_rollups extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "api_consumer_hours" ("api_id" varchar(40) not null, "hour" timestamptz not null, "org_id" varchar(40) not null, constraint "api_consumer_hours_pkey" primary key ("api_id", "hour", "org_id"));`,
    );
    this.addSql(`create index "api_consumer_hours_hour_idx" on "api_consumer_hours" ("hour");`);

    this.addSql(
      `create table "api_ranks" ("api_id" varchar(40) not null, "board" varchar(32) not null, "scope" varchar(80) not null, "rank" int not null, "metric" double precision not null, "updated_at" timestamptz not null default now(), constraint "api_ranks_pkey" primary key ("api_id", "board", "scope"));`,
    );
    this.addSql(`create index "api_ranks_board_scope_rank_idx" on "api_ranks" ("board", "scope", "rank");`);

    this.addSql(
      `create table "api_requests" ("id" varchar(40) not null, "query" varchar(500) not null, "normalized" varchar(500) not null, "tokens" text[] not null default '{}', "votes" int not null default 1, "status" text check ("status" in ('open', 'fulfilled')) not null default 'open', "fulfilled_api_id" varchar(40) null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "api_requests_pkey" primary key ("id"), constraint api_requests_votes_positive check (votes >= 1));`,
    );
    this.addSql(`create index "api_requests_status_votes_idx" on "api_requests" ("status", "votes");`);

    this.addSql(
      `create table "api_request_votes" ("id" varchar(40) not null, "request_id" varchar(40) not null, "org_id" varchar(40) not null, "email" varchar(254) null, "notes" varchar(2000) null, "notified_at" timestamptz null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "api_request_votes_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "api_request_votes_request_id_index" on "api_request_votes" ("request_id");`);
    this.addSql(
      `alter table "api_request_votes" add constraint "api_request_votes_request_org_uniq" unique ("request_id", "org_id");`,
    );

    this.addSql(
      `create table "api_scores" ("api_id" varchar(40) not null, "svc_score" int not null, "reliability" real not null, "latency" real not null, "usage" real not null, "value" real not null, "freshness" real not null, "updated_at" timestamptz not null default now(), constraint "api_scores_pkey" primary key ("api_id"), constraint api_scores_svc_score_range check (svc_score >= 0 AND svc_score <= 100));`,
    );
    this.addSql(`create index "api_scores_svc_score_idx" on "api_scores" ("svc_score");`);

    this.addSql(
      `create table "api_score_history" ("api_id" varchar(40) not null, "day" date not null, "svc_score" int not null, "reliability" real not null, "latency" real not null, "usage" real not null, "value" real not null, "freshness" real not null, constraint "api_score_history_pkey" primary key ("api_id", "day"));`,
    );

    this.addSql(
      `create table "api_stats" ("api_id" varchar(40) not null, "window" varchar(8) not null, "calls" bigint not null default 0, "successes" bigint not null default 0, "p50_ms" int null, "p95_ms" int null, "gmv_cents" bigint not null default 0, "unique_consumers" int not null default 0, "errors" jsonb not null, "updated_at" timestamptz not null default now(), constraint "api_stats_pkey" primary key ("api_id", "window"), constraint api_stats_window_check check ("window" = '24h' OR "window" = '7d' OR "window" = '30d'));`,
    );

    this.addSql(
      `create table "api_usage_hourly" ("api_id" varchar(40) not null, "hour" timestamptz not null, "calls" bigint not null default 0, "successes" bigint not null default 0, "gmv_cents" bigint not null default 0, "errors_4xx" bigint not null default 0, "errors_5xx" bigint not null default 0, "errors_timeout" bigint not null default 0, "latency_hist" jsonb not null, constraint "api_usage_hourly_pkey" primary key ("api_id", "hour"));`,
    );
    this.addSql(`create index "api_usage_hourly_hour_idx" on "api_usage_hourly" ("hour");`);

    this.addSql(
      `create table "endpoint_prices_seen" ("endpoint_id" varchar(40) not null, "api_id" varchar(40) not null, "price_cents" bigint not null, "updated_at" timestamptz not null default now(), constraint "endpoint_prices_seen_pkey" primary key ("endpoint_id"));`,
    );

    this.addSql(
      `create table "market_events" ("id" varchar(120) not null, "kind" text check ("kind" in ('price_change', 'mover')) not null, "api_id" varchar(40) not null, "data" jsonb not null, "created_at" timestamptz not null default now(), constraint "market_events_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "market_events_created_idx" on "market_events" ("created_at");`);

    this.addSql(
      `create table "rollup_state" ("name" varchar(40) not null, "watermark" timestamptz not null, "full_hour" timestamptz null, "updated_at" timestamptz not null default now(), constraint "rollup_state_pkey" primary key ("name"));`,
    );

    this.addSql(
      `alter table "api_request_votes" add constraint "api_request_votes_request_id_foreign" foreign key ("request_id") references "api_requests" ("id") on update cascade;`,
    );

    this.addSql(`create index "usage_events_created_idx" on "usage_events" ("created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "api_request_votes" drop constraint "api_request_votes_request_id_foreign";`);

    this.addSql(`drop table if exists "api_consumer_hours" cascade;`);

    this.addSql(`drop table if exists "api_ranks" cascade;`);

    this.addSql(`drop table if exists "api_requests" cascade;`);

    this.addSql(`drop table if exists "api_request_votes" cascade;`);

    this.addSql(`drop table if exists "api_scores" cascade;`);

    this.addSql(`drop table if exists "api_score_history" cascade;`);

    this.addSql(`drop table if exists "api_stats" cascade;`);

    this.addSql(`drop table if exists "api_usage_hourly" cascade;`);

    this.addSql(`drop table if exists "endpoint_prices_seen" cascade;`);

    this.addSql(`drop table if exists "market_events" cascade;`);

    this.addSql(`drop table if exists "rollup_state" cascade;`);

    this.addSql(`drop index "usage_events_created_idx";`);
  }
}
