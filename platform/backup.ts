/**
 * What `npm run backup` and `npm run restore` share (docs/operations.md, Backup and restore): the manifest written
 * beside a dump, the figures it records (read in the dump's own snapshot, so they describe exactly what the dump
 * holds), the dump's checksum, and the Redis side (undrained usage before a backup, the fast state after a restore).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type pg from 'pg';
import type { Redis, Cluster } from 'ioredis';
import { SPEND_BUCKETS, usageStreamKey } from '../core/spend/redis-spend-store.js';

export const MANIFEST_VERSION = 1;

/** Rows counted in the manifest and compared after a restore: the money and the identities a restore must keep. */
export const COUNTED_TABLES = [
  'orgs',
  'users',
  'api_keys',
  'apis',
  'endpoints',
  'usage_events',
  'ledger_entries',
  'usage_batches',
  'idempotency_records',
  'payments',
  'earning_accruals',
  'payouts',
] as const;

export interface BookFigures {
  /** Applied migrations (`mikro_orm_migrations`): how many, and the newest one's name. */
  migrations: { count: number; latest: string | null };
  rows: Record<string, number>;
  /** Sum of every ledger entry (cents). */
  ledger_sum_cents: number;
  /** Sum of every org's cached balance (cents); equals the ledger sum when the books are clean. */
  org_balance_sum_cents: number;
  /** Sum of the cost of successful calls (cents). */
  usage_charged_cents: number;
}

export interface BackupManifest {
  manifest_version: number;
  created_at: string;
  /** The database, without credentials. */
  database: string;
  format: 'pg_dump-custom';
  pg_dump_version: string;
  server_version: string;
  dump: { file: string; bytes: number; sha256: string };
  /** Usage events still in Redis's streams (not yet in Postgres) when the snapshot was taken; null without Redis. */
  undrained_usage_events: number | null;
  figures: BookFigures;
}

/** The manifest lives beside the dump: `backup.dump` → `backup.dump.manifest.json`. */
export const manifestPath = (dumpFile: string) => `${dumpFile}.manifest.json`;

/** A connection string without its password (for logs, manifests and child-process arguments). */
export function withoutPassword(url: string): string {
  const u = new URL(url);
  u.password = '';
  return u.toString();
}

export function passwordOf(url: string): string | undefined {
  const p = new URL(url).password;
  return p ? decodeURIComponent(p) : undefined;
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function tableExists(client: pg.ClientBase, table: string): Promise<boolean> {
  const { rows } = await client.query<{ t: string | null }>('select to_regclass($1) as t', [`public.${table}`]);
  return rows[0]?.t != null;
}

/** The figures of the database `client` sees (call it inside the snapshot they must describe). */
export async function readFigures(client: pg.ClientBase): Promise<BookFigures> {
  const rows: Record<string, number> = {};
  for (const table of COUNTED_TABLES) {
    if (!(await tableExists(client, table))) continue;
    const { rows: r } = await client.query<{ n: string }>(`select count(*) as n from ${table}`);
    rows[table] = Number(r[0]!.n);
  }
  const migrations = (await tableExists(client, 'mikro_orm_migrations'))
    ? (
        await client.query<{ count: string; latest: string | null }>(
          `select count(*) as count, (select name from mikro_orm_migrations order by id desc limit 1) as latest
             from mikro_orm_migrations`,
        )
      ).rows[0]!
    : { count: '0', latest: null };
  const sum = async (text: string, table: string) =>
    (await tableExists(client, table)) ? Number((await client.query<{ s: string }>(text)).rows[0]!.s) : 0;
  return {
    migrations: { count: Number(migrations.count), latest: migrations.latest },
    rows,
    ledger_sum_cents: await sum('select coalesce(sum(amount_cents), 0) as s from ledger_entries', 'ledger_entries'),
    org_balance_sum_cents: await sum('select coalesce(sum(credit_cents), 0) as s from orgs', 'orgs'),
    usage_charged_cents: await sum(
      `select coalesce(sum(cost_cents), 0) as s from usage_events where outcome = 'success'`,
      'usage_events',
    ),
  };
}

/** Every difference between the figures a manifest recorded and a restored database's (empty when they agree). */
export function compareFigures(expected: BookFigures, actual: BookFigures): string[] {
  const out: string[] = [];
  for (const [table, n] of Object.entries(expected.rows)) {
    if (actual.rows[table] !== n) out.push(`${table}: ${n} rows in the backup, ${actual.rows[table] ?? 'none'} now`);
  }
  for (const k of ['ledger_sum_cents', 'org_balance_sum_cents', 'usage_charged_cents'] as const) {
    if (expected[k] !== actual[k]) out.push(`${k}: ${expected[k]} in the backup, ${actual[k]} now`);
  }
  return out;
}

type AnyRedis = Redis | Cluster;

/** Usage events in the fast state's streams (answered calls the drain has not booked in Postgres yet). */
export async function undrainedUsage(redis: AnyRedis): Promise<number> {
  const pipeline = redis.pipeline();
  for (let b = 0; b < SPEND_BUCKETS; b++) pipeline.xlen(usageStreamKey(b));
  const results = (await pipeline.exec()) ?? [];
  let total = 0;
  for (const [err, n] of results) {
    if (err) throw err;
    total += Number(n);
  }
  return total;
}

/**
 * Delete the gateway's fast state (`sp:*` under the client's key prefix: cached balances, spend, reservations,
 * idempotency records, rate windows) so it is rebuilt from the restored Postgres on each org's next call. The usage
 * streams (`sp:{N}:u`) are kept: entries in them are answered calls Postgres does not have, and a gateway's drain
 * still books them (and so is `sp:buckets`, the list of buckets the drains' claims visit). Returns how many keys were deleted and how many stream entries were kept.
 */
export async function flushFastState(
  redis: Redis,
  keyPrefix: string,
): Promise<{ deleted: number; keptUsageEvents: number }> {
  let deleted = 0;
  let cursor = '0';
  const stream = /^sp:(\{\d+\}:u|buckets)$/;
  do {
    // SCAN's MATCH is not prefixed by ioredis; the keys it returns carry the prefix, UNLINK adds it again.
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}sp:*`, 'COUNT', 1000);
    cursor = next;
    const names = keys.map((k) => k.slice(keyPrefix.length)).filter((k) => !stream.test(k));
    if (names.length) deleted += await redis.unlink(...names);
  } while (cursor !== '0');
  return { deleted, keptUsageEvents: await undrainedUsage(redis) };
}
