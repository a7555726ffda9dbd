/**
 * A throwaway, migrated database on the benchmark's Postgres server (BENCH_DATABASE_ADMIN_URL, the machine's by
 * default) for the gateway benchmark and the soak: created with a random suffix, dropped by `drop()`.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { initOrm, migrateUp } from '../db/mikro-orm.config.js';

export const BENCH_ADMIN_URL = process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchDatabase {
  name: string;
  url: string;
  /** The random suffix, also handy for a Redis key prefix. */
  suffix: string;
  drop(): Promise<void>;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: BENCH_ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createBenchDatabase(label: string): Promise<BenchDatabase> {
  const suffix = randomBytes(4).toString('hex');
  const name = `mp_${label}_${suffix}`;
  await admin((c) => c.query(`create database ${name}`));
  const url = new URL(BENCH_ADMIN_URL);
  url.pathname = `/${name}`;
  const migrator = await initOrm({ url: url.toString(), poolMax: 1 });
  try {
    await migrateUp(migrator);
  } finally {
    await migrator.close(true);
  }
  return {
    name,
    url: url.toString(),
    suffix,
    drop: () => admin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}
