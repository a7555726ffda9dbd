/**
 * A throwaway, migrated database on the benchmark's Postgres server (BENCH_DATABASE_ADMIN_URL, the machine's by
 * default) for the gateway benchmark and the soak: created with a random suffix, dropped by `drop()`.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { initOrm, migrateUp } from '../db/mikro-orm.config.js';
import { withPgClient } from '../test/helpers/db.js';

export const BENCH_ADMIN_URL = process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchDatabase {
  name: string;
  url: string;
  /** The random suffix, also handy for a Redis key prefix. */
  suffix: string;
  drop(): Promise<void>;
}

const admin = <T>(fn: (c: pg.Client) => Promise<T>): Promise<T> => withPgClient(BENCH_ADMIN_URL, fn);

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

/**
 * The environment the benchmark's and the soak's services run with: the database and Redis key prefix of the run,
 * no Temporal (an address nothing answers), loopback upstreams allowed, warn-level logs.
 */
export function benchEnv(
  databaseUrl: string,
  redis: { url: string; prefix: string },
  secretsKey: string,
  rateLimitPerMin: number,
): Record<string, string> {
  return {
    NODE_ENV: 'development',
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_MAX: '10',
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: redis.prefix,
    TEMPORAL_ADDRESS: '127.0.0.1:9',
    SECRETS_KEY: secretsKey,
    UPSTREAM_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: 'warn',
    GATEWAY_RATE_LIMIT_PER_MIN: String(rateLimitPerMin),
  };
}
