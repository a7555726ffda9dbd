// One contract, two stores: Redis (production) and the in-process store (embedded mode) behave the same.
import type { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { MemoryCounterStore, RedisCounterStore, type CounterStore } from '../../../core/counters/index.js';
import { createLogger } from '../../../core/logger.js';
import { REDIS_URL } from '../../helpers/env.js';
import { testRedisPrefix } from '../../helpers/services.js';
import { useStarted } from '../../helpers/suite.js';

const logger = createLogger({ level: 'silent' });

const factories: [string, () => Promise<CounterStore>][] = [
  [
    'redis',
    async () => {
      const s = new RedisCounterStore({ url: REDIS_URL, keyPrefix: testRedisPrefix(), logger });
      expect(await s.connect()).toBe(true);
      return s;
    },
  ],
  ['memory', () => Promise.resolve(new MemoryCounterStore(testRedisPrefix()))],
];

describe.each(factories)('CounterStore contract: %s', (_name, make) => {
  const store = useStarted(make, (s) => s.close());

  it('pings', async () => {
    expect(await store().ping()).toBeGreaterThanOrEqual(0);
  });

  it('counts hits in a fixed window and refuses past the limit without counting them', async () => {
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await store().hitWindow('w1', 3, 60_000));
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false, false]);
    expect(results.map((r) => r.count)).toEqual([1, 2, 3, 3, 3]);
    expect(results[4]!.resetMs).toBeGreaterThan(50_000);
    expect(results[4]!.resetMs).toBeLessThanOrEqual(60_000);
  });

  it('opens a new window after the old one expires', async () => {
    expect((await store().hitWindow('w2', 1, 150)).allowed).toBe(true);
    expect((await store().hitWindow('w2', 1, 150)).allowed).toBe(false);
    await new Promise((r) => setTimeout(r, 250));
    expect((await store().hitWindow('w2', 1, 150)).allowed).toBe(true);
  });

  it('counts exactly under concurrency', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, () => store().hitWindow('w3', 20, 60_000)));
    expect(results.filter((r) => r.allowed)).toHaveLength(20);
  });

  it('gets, sets with a TTL and deletes', async () => {
    expect(await store().get('k1')).toBeNull();
    await store().set('k1', 'v1');
    expect(await store().get('k1')).toBe('v1');
    await store().set('k2', 'v2', 100);
    await new Promise((r) => setTimeout(r, 200));
    expect(await store().get('k2')).toBeNull();
    await store().del('k1');
    expect(await store().get('k1')).toBeNull();
  });

  it('sets only when absent', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => store().setIfAbsent('once', String(i), 10_000)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('increments', async () => {
    expect(await store().incrBy('n', 5)).toBe(5);
    expect(await store().incrBy('n', -2, 10_000)).toBe(3);
  });

  it('publishes to subscribers and stops after unsubscribe', async () => {
    const got: string[] = [];
    const unsubscribe = await store().subscribe('chan', (m) => got.push(m));
    await store().publish('chan', 'hello');
    await expect.poll(() => got, { timeout: 2_000 }).toEqual(['hello']);
    await unsubscribe();
    await store().publish('chan', 'ignored');
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toEqual(['hello']);
  });
});

describe('RedisCounterStore when Redis is unreachable', () => {
  it('fails fast instead of queueing commands', async () => {
    const store = new RedisCounterStore({ url: 'redis://127.0.0.1:9', keyPrefix: 'x:', logger });
    expect(await store.connect(500)).toBe(false);
    const started = Date.now();
    await expect(store.hitWindow('k', 1, 1000)).rejects.toThrow();
    await expect(store.ping()).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2_000);
    await store.close();
  });
});

describe('RedisCounterStore after a reconnect', () => {
  it('never resends an unanswered command (a resent admission script would run twice), single node or cluster', async () => {
    const store = new RedisCounterStore({ url: 'redis://127.0.0.1:9', keyPrefix: 'x:', logger });
    expect((store.client as Redis).options.autoResendUnfulfilledCommands).toBe(false);
    await store.close();
    const cluster = new RedisCounterStore({
      clusterNodes: [{ host: '127.0.0.1', port: 9 }],
      keyPrefix: 'x:',
      logger,
    });
    expect((cluster.client as Cluster).options.redisOptions?.autoResendUnfulfilledCommands).toBe(false);
    await cluster.close();
  });
});

describe('key prefixes', () => {
  it('isolate stores that share one Redis', async () => {
    const a = new RedisCounterStore({ url: REDIS_URL, keyPrefix: testRedisPrefix(), logger });
    const b = new RedisCounterStore({ url: REDIS_URL, keyPrefix: testRedisPrefix(), logger });
    await a.connect();
    await b.connect();
    await a.set('shared', 'a');
    expect(await b.get('shared')).toBeNull();
    await Promise.all([a.close(), b.close()]);
  });
});
