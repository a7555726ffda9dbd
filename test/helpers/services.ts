/**
 * A real service stack for integration tests: a fresh Postgres database, a Redis key prefix of its own, and (when
 * given) the Temporal dev server's address. Logs are captured in memory so tests can assert on them.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Clock } from '../../core/clock.js';
import { loadConfig, type Config } from '../../core/config.js';
import { createLogger, type Logger } from '../../core/logger.js';
import { createServices, type ServiceOptions, type Services } from '../../platform/services.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { REDIS_URL } from './env.js';

export interface LogCapture {
  logger: Logger;
  lines: string[];
  text(): string;
}

export function captureLogs(level = 'debug'): LogCapture {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { logger: createLogger({ level }, stream), lines, text: () => lines.join('') };
}

export function testRedisPrefix(): string {
  return `t:${randomBytes(5).toString('hex')}:`;
}

export interface TestStack {
  services: Services;
  config: Config;
  db: TestDatabase;
  logs: LogCapture;
  close(): Promise<void>;
}

/** An address nothing listens on: Temporal calls fail fast, health reports it down. */
export const NO_TEMPORAL = '127.0.0.1:9';

export async function createTestStack(
  options: {
    temporalAddress?: string;
    env?: Record<string, string>;
    db?: TestDatabase;
    clock?: Clock;
    upstream?: ServiceOptions['upstream'];
  } = {},
): Promise<TestStack> {
  const db = options.db ?? (await createTestDatabase());
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: db.url,
    DATABASE_POOL_MAX: '10',
    REDIS_URL,
    REDIS_KEY_PREFIX: testRedisPrefix(),
    TEMPORAL_ADDRESS: options.temporalAddress ?? NO_TEMPORAL,
    TEMPORAL_TASK_QUEUE: `test-${randomBytes(4).toString('hex')}`,
    UPSTREAM_ALLOW_PRIVATE: 'true',
    SIGNUP_RATE_LIMIT_PER_HOUR: '1000',
    SECRETS_KEY: '7e'.repeat(32),
    ...options.env,
  });
  const logs = captureLogs();
  const services = await createServices(config, {
    logger: logs.logger,
    clock: options.clock,
    upstream: options.upstream,
  });
  return {
    services,
    config,
    db,
    logs,
    async close() {
      await services.close();
      if (!options.db) await db.drop();
    },
  };
}
