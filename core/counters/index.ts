import type { CounterConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { CounterStore } from './counter-store.js';
import { MemoryCounterStore } from './memory-store.js';
import { RedisCounterStore } from './redis-store.js';

export type { CounterStore, WindowHit, Unsubscribe } from './counter-store.js';
export { MemoryCounterStore, RedisCounterStore };

export async function createCounterStore(config: CounterConfig, logger: Logger): Promise<CounterStore> {
  if (config.kind === 'memory') return new MemoryCounterStore(config.keyPrefix);
  const store =
    config.kind === 'redis-cluster'
      ? new RedisCounterStore({ clusterNodes: config.nodes, keyPrefix: config.keyPrefix, logger })
      : new RedisCounterStore({ url: config.url, keyPrefix: config.keyPrefix, logger });
  await store.connect();
  return store;
}
