/** The spend stores the contract and property tests run against, each on a Redis key prefix of its own. */
import { expect } from 'vitest';
import type { Clock } from '../../core/clock.js';
import { RedisCounterStore } from '../../core/counters/index.js';
import { createLogger } from '../../core/logger.js';
import { RedisSpendStore } from '../../core/spend/redis-spend-store.js';
import type { SpendStore } from '../../core/spend/spend-store.js';
import { REDIS_URL } from './env.js';
import { testRedisPrefix } from './services.js';

const logger = createLogger({ level: 'silent' });

/**
 * A Redis spend store on the test Redis (`clusterNodes`: on that cluster) under a fresh prefix, once its connection
 * is up; close its `counters` after.
 */
export async function connectRedisSpendStore(
  clock: Clock,
  clusterNodes?: { host: string; port: number }[],
): Promise<{ counters: RedisCounterStore; store: RedisSpendStore }> {
  const counters = clusterNodes
    ? new RedisCounterStore({ clusterNodes, keyPrefix: testRedisPrefix(), logger })
    : new RedisCounterStore({ url: REDIS_URL, keyPrefix: testRedisPrefix(), logger });
  expect(await counters.connect(clusterNodes ? 20_000 : undefined)).toBe(true);
  return { counters, store: new RedisSpendStore(counters.client, { clock }) };
}

/** The `'redis'` row of a store table: each call connects a store and hands its counters to `keep` (to close after). */
export function redisStoreRow(
  clock: Clock,
  keep: (counters: RedisCounterStore) => void,
): [string, () => Promise<SpendStore>] {
  return [
    'redis',
    async () => {
      const { counters, store } = await connectRedisSpendStore(clock);
      keep(counters);
      return store;
    },
  ];
}
