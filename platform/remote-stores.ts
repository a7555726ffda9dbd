/**
 * The stores the all-in-one's two event loops share on `npm start`'s embedded defaults (gateway/thread.ts), reached
 * over a message port with Comlink (Google's maintained RPC over postMessage: calls become promises, callbacks cross
 * as proxies). On Redis neither exists: both threads open their own connections.
 *
 * - The counters (rate windows, codes, pub/sub) stay on the main thread, where the control plane uses them; the gateway
 *   thread uses them only to hear invalidations (keys, orgs, listings) and for /health, so RemoteCounterStore there
 *   forwards every call.
 * - The memory spend store lives on the gateway thread, beside the admissions that use it per call; the control plane
 *   asks it only for its read barrier and announces key and org changes, so RemoteSpendStore on the main thread
 *   forwards those (and every other asynchronous call, for completeness).
 */
import * as Comlink from 'comlink';
import type { CounterStore, Unsubscribe, WindowHit } from '../core/counters/counter-store.js';
import type { SpendStore } from '../core/spend/spend-store.js';

/** The main thread's counters as the gateway thread calls them (subscribe's callback and unsubscribe are proxies). */
export type CountersPort = Omit<CounterStore, 'backend' | 'close' | 'subscribe'> & {
  subscribe(
    channel: string,
    onMessage: (message: string) => void,
  ): Promise<(() => Promise<void>) & Comlink.ProxyMarked>;
};

/** Main thread: what the gateway thread may call on its counters. */
export function countersPort(counters: CounterStore): CountersPort {
  return {
    ping: () => counters.ping(),
    hitWindow: (key, limit, windowMs) => counters.hitWindow(key, limit, windowMs),
    get: (key) => counters.get(key),
    set: (key, value, ttlMs) => counters.set(key, value, ttlMs),
    setIfAbsent: (key, value, ttlMs) => counters.setIfAbsent(key, value, ttlMs),
    del: (key) => counters.del(key),
    incrBy: (key, by, ttlMs) => counters.incrBy(key, by, ttlMs),
    publish: (channel, message) => counters.publish(channel, message),
    async subscribe(channel, onMessage) {
      const unsubscribe = await counters.subscribe(channel, (message) => void onMessage(message));
      return Comlink.proxy(unsubscribe);
    },
  };
}

/** Gateway thread: the main thread's in-process counters. */
export class RemoteCounterStore implements CounterStore {
  readonly backend = 'memory' as const;

  constructor(private readonly remote: Comlink.Remote<CountersPort>) {}

  ping(): Promise<number> {
    return this.remote.ping();
  }
  hitWindow(key: string, limit: number, windowMs: number): Promise<WindowHit> {
    return this.remote.hitWindow(key, limit, windowMs);
  }
  get(key: string): Promise<string | null> {
    return this.remote.get(key);
  }
  set(key: string, value: string, ttlMs?: number): Promise<void> {
    return this.remote.set(key, value, ttlMs);
  }
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return this.remote.setIfAbsent(key, value, ttlMs);
  }
  del(key: string): Promise<void> {
    return this.remote.del(key);
  }
  incrBy(key: string, by: number, ttlMs?: number): Promise<number> {
    return this.remote.incrBy(key, by, ttlMs);
  }
  publish(channel: string, message: string): Promise<void> {
    return this.remote.publish(channel, message);
  }
  async subscribe(channel: string, onMessage: (message: string) => void): Promise<Unsubscribe> {
    const unsubscribe = await this.remote.subscribe(channel, Comlink.proxy(onMessage));
    return async () => {
      await unsubscribe();
      unsubscribe[Comlink.releaseProxy]();
    };
  }
  async close(): Promise<void> {
    // The main thread owns the store and closes it.
  }
}

/** What the main thread's RemoteSpendStore forwards: the memory store's asynchronous methods. */
type AsyncSpend = {
  [
    K in keyof SpendStore as SpendStore[K] extends ((...args: never[]) => Promise<unknown>) | undefined ? K : never
  ]-?: NonNullable<SpendStore[K]>;
};

/**
 * Main thread: the gateway thread's memory spend store. The control plane uses pendingUsage (its read barrier),
 * keysChanged and forgetOrg; the per-call methods forward too, so a second gateway on the main thread would still be
 * correct, only slower (none runs: the agent tools call the gateway thread).
 */
export class RemoteSpendStore implements SpendStore {
  refusal: Error | null = null;
  // Boxed: a Comlink proxy is thenable (awaiting it reads the remote value), so a promise must not resolve to one.
  private remote: Promise<{ spend: Comlink.Remote<AsyncSpend> }>;
  private connect!: (box: { spend: Comlink.Remote<AsyncSpend> }) => void;

  constructor() {
    this.remote = new Promise((resolve) => (this.connect = resolve));
  }

  /** The gateway thread is up: calls made before now go out. */
  attach(remote: Comlink.Remote<AsyncSpend>): void {
    this.connect({ spend: remote });
  }

  private async call<K extends keyof AsyncSpend>(
    name: K,
    ...args: Parameters<AsyncSpend[K]>
  ): Promise<Awaited<ReturnType<AsyncSpend[K]>>> {
    const { spend } = await this.remote;
    const method = spend[name] as unknown as (...a: Parameters<AsyncSpend[K]>) => Promise<unknown>;
    return (await method(...args)) as Awaited<ReturnType<AsyncSpend[K]>>;
  }

  batchKey(): string {
    // The memory store settles every org's calls in one batch (core/spend/memory-spend-store.ts).
    return 'memory';
  }

  admit: SpendStore['admit'] = (input) => this.call('admit', input);
  settle: SpendStore['settle'] = (input) => this.call('settle', input);
  settleBatch: SpendStore['settleBatch'] = (inputs) => this.call('settleBatch', inputs);
  void: SpendStore['void'] = (ref) => this.call('void', ref);
  fail: SpendStore['fail'] = (ref, failedEvent) => this.call('fail', ref, failedEvent);
  hydrate: SpendStore['hydrate'] = (input) => this.call('hydrate', input);
  forgetOrg: SpendStore['forgetOrg'] = (orgId) => this.call('forgetOrg', orgId);
  keysChanged: SpendStore['keysChanged'] = (orgId) => this.call('keysChanged', orgId);
  expired: SpendStore['expired'] = (nowMs, limit, part) => this.call('expired', nowMs, limit, part);
  idempotencyRecord: SpendStore['idempotencyRecord'] = (key) => this.call('idempotencyRecord', key);
  claimUsage: SpendStore['claimUsage'] = (minIdleMs, limit, part) => this.call('claimUsage', minIdleMs, limit, part);
  ackUsage: SpendStore['ackUsage'] = (acks) => this.call('ackUsage', acks);
  pendingUsage: SpendStore['pendingUsage'] = (orgId) => this.call('pendingUsage', orgId);
  addSeen: SpendStore['addSeen'] = (entries) => this.call('addSeen', entries);
  seenEpoch: SpendStore['seenEpoch'] = (orgId) => this.call('seenEpoch', orgId);
  completeSeen: SpendStore['completeSeen'] = (orgId, epoch) => this.call('completeSeen', orgId, epoch);
}
