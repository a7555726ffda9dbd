/**
 * The catalog rollup tables, for tests only, with exactly the columns agreed with the rollups' migration (issue 11
 * item 6 creates them for real; `if not exists` makes this a no-op once it has). The readers are core/catalog/rollups/merit.ts,
 * stats.ts and rollup-reads.ts. Applied to the template database, so every test database has them.
 */
import { sql } from './db.js';

export const ROLLUP_TABLES_SQL = [
  `create table if not exists api_scores (
     api_id varchar(40) primary key, svc_score int, reliability real, latency real, usage real, value real,
     freshness real, updated_at timestamptz)`,
  `create table if not exists api_stats (
     api_id varchar(40) not null, "window" varchar(8) not null, calls bigint, successes bigint, p50_ms int, p95_ms int,
     gmv_cents bigint, unique_consumers int, errors jsonb, updated_at timestamptz, primary key (api_id, "window"))`,
  `create table if not exists api_score_history (
     api_id varchar(40) not null, day date not null, svc_score int, reliability real, latency real, usage real,
     value real, freshness real, primary key (api_id, day))`,
  `create table if not exists api_ranks (
     api_id varchar(40) not null, board varchar(32) not null, scope varchar(80) not null, rank int,
     metric double precision, updated_at timestamptz, primary key (api_id, board, scope))`,
];

export async function ensureRollupTables(url: string): Promise<void> {
  for (const statement of ROLLUP_TABLES_SQL) await sql(url, statement);
}
