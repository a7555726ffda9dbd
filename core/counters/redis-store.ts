/**
 * Redis CounterStore, on one server (`url`) or a Redis Cluster (`clusterNodes`, seed nodes; ioredis's `Cluster`
 * discovers the rest and follows slot moves). Commands fail fast when Redis is unreachable (no offline queue, short
 * command timeout) so money paths can answer 503 instead of hanging. Keys carry the configured prefix (ioredis
 * `keyPrefix`, which also prefixes KEYS of defined Lua commands); pub/sub channels are prefixed by hand because ioredis
 * does not. Every command here names one key, so each is in one slot on a cluster. Pub/sub is classic (not sharded):
 * a cluster forwards a PUBLISH to every node, so a subscriber connected to any node hears every message.
 */
import { Cluster, Redis, type Result, type Callback, type RedisOptions } from 'ioredis';
import type { Logger } from '../logger.js';
import { luaScript } from '../redis-lua.js';
import type { CounterStore, Unsubscribe, WindowHit } from './counter-store.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    hitWindow(
      key: string,
      limit: number,
      windowMs: number,
      cb?: Callback<[number, number, number]>,
    ): Result<[number, number, number], Context>;
  }
}

/** One hit on a fixed-window counter (lua/hit-window.lua: its KEYS, ARGV and reply). */
const HIT_WINDOW_LUA = luaScript(import.meta.url, 'lua/hit-window.lua');

export type RedisStoreOptions = (
  { url: string; clusterNodes?: undefined } | { clusterNodes: ClusterNode[]; url?: undefined }
) & {
  keyPrefix: string;
  logger: Logger;
  commandTimeoutMs?: number;
};

export interface ClusterNode {
  host: string;
  port: number;
}

export class RedisCounterStore implements CounterStore {
  readonly backend = 'redis' as const;
  readonly client: Redis | Cluster;
  private subscriber: Redis | Cluster | undefined;
  private readonly handlers = new Map<string, Set<(message: string) => void>>();

  constructor(private readonly options: RedisStoreOptions) {
    const connection: RedisOptions = {
      maxRetriesPerRequest: 1,
      // A command whose answer was lost in a reconnect fails instead of being sent again: a resent admission script
      // would otherwise run twice (the script is idempotent per reservation too, as a second line of defence).
      autoResendUnfulfilledCommands: false,
      connectTimeout: 2_000,
      commandTimeout: options.commandTimeoutMs ?? 1_500,
    };
    const retry = (times: number) => Math.min(times * 200, 2_000);
    this.client = options.clusterNodes
      ? new Cluster(options.clusterNodes, {
          keyPrefix: options.keyPrefix,
          enableOfflineQueue: false,
          redisOptions: connection,
          clusterRetryStrategy: retry,
          lazyConnect: true,
          // Off on a cluster: ioredis groups an auto-pipelined command by its first argument's slot, which for the
          // spend scripts (variable key counts) is the key count, not a key. Each command is routed by its keys.
          enableAutoPipelining: false,
        })
      : new Redis(options.url, {
          ...connection,
          keyPrefix: options.keyPrefix,
          enableOfflineQueue: false,
          retryStrategy: retry,
          lazyConnect: true,
          // Commands issued in the same tick share one write (the gateway's admissions and settles under load).
          enableAutoPipelining: true,
        });
    this.client.on('error', (err: Error) => options.logger.warn({ err: err.message }, 'redis connection error'));
    this.client.defineCommand('hitWindow', { numberOfKeys: 1, lua: HIT_WINDOW_LUA });
  }

  /** Connect, waiting at most `timeoutMs`; on failure the client keeps retrying in the background. */
  async connect(timeoutMs = 5_000): Promise<boolean> {
    try {
      await Promise.race([
        this.client.connect(),
        new Promise((_, reject) => setTimeout(() => reject(new Error('redis connect timeout')), timeoutMs).unref()),
      ]);
      return true;
    } catch (err) {
      this.options.logger.warn({ err: (err as Error).message }, 'redis not reachable at boot; retrying in background');
      return false;
    }
  }

  async ping(): Promise<number> {
    const t = performance.now();
    await this.client.ping();
    return performance.now() - t;
  }

  async hitWindow(key: string, limit: number, windowMs: number): Promise<WindowHit> {
    const [allowed, count, resetMs] = await this.client.hitWindow(key, limit, windowMs);
    return { allowed: allowed === 1, count, resetMs };
  }

  async get(key: string): Promise<string | null> {
    return this.client.get(key);
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    if (ttlMs === undefined) await this.client.set(key, value);
    else await this.client.set(key, value, 'PX', ttlMs);
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.client.set(key, value, 'PX', ttlMs, 'NX')) === 'OK';
  }

  async del(key: string): Promise<void> {
    await this.client.del(key);
  }

  async incrBy(key: string, by: number, ttlMs?: number): Promise<number> {
    if (ttlMs === undefined) return this.client.incrby(key, by);
    const [[, value]] = (await this.client.multi().incrby(key, by).pexpire(key, ttlMs).exec()) as [[null, number]];
    return value;
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.client.publish(this.options.keyPrefix + channel, message);
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<Unsubscribe> {
    const name = this.options.keyPrefix + channel;
    if (!this.subscriber) {
      // A subscribed connection can do nothing else, so it is a separate one. It keeps an offline queue so
      // subscriptions made while Redis is down are sent on connect, and ioredis re-subscribes after reconnects.
      const retry = (times: number) => Math.min(times * 200, 2_000);
      // Re-subscribing after a reconnect is done here, not by ioredis, so a refusal (an ACL that no longer allows
      // the channel) is logged instead of becoming an unhandled rejection that stops the process.
      const options = { connectTimeout: 2_000, maxRetriesPerRequest: null, autoResubscribe: false };
      const subscriber = (this.subscriber = this.options.clusterNodes
        ? new Cluster(this.options.clusterNodes, { redisOptions: options, clusterRetryStrategy: retry })
        : new Redis(this.options.url, { ...options, retryStrategy: retry }));
      subscriber.on('error', (err: Error) =>
        this.options.logger.warn({ err: err.message }, 'redis subscriber connection error'),
      );
      let connectedBefore = false;
      subscriber.on('ready', () => {
        if (!connectedBefore) return void (connectedBefore = true); // the first connection sends the queued ones
        for (const channel of this.handlers.keys()) {
          subscriber.subscribe(channel).catch((err: unknown) => {
            this.options.logger.warn({ err: (err as Error).message, channel }, 'redis resubscribe failed');
          });
        }
      });
      this.subscriber.on('message', (ch: string, msg: string) => {
        for (const h of this.handlers.get(ch) ?? []) h(msg);
      });
    }
    let set = this.handlers.get(name);
    if (!set) {
      set = new Set();
      this.handlers.set(name, set);
      await this.subscriber.subscribe(name);
    }
    set.add(onMessage);
    return async () => {
      const s = this.handlers.get(name);
      if (!s) return;
      s.delete(onMessage);
      if (s.size === 0) {
        this.handlers.delete(name);
        // Only a live connection is told; while Redis is down the subscription is gone with the connection anyway,
        // and an offline-queued UNSUBSCRIBE would hold shutdown until Redis came back.
        const sub = this.subscriber;
        if (sub?.status === 'ready') {
          await Promise.race([
            sub.unsubscribe(name).catch(() => undefined),
            new Promise((r) => setTimeout(r, 1_000).unref()),
          ]);
        }
      }
    };
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.client.quit(), this.subscriber?.quit()]);
    this.client.disconnect();
    this.subscriber?.disconnect();
  }
}
