/**
 * The fast-state store: rate-limit windows, short-lived values and cross-process notifications.
 * Production uses Redis (shared by every process); the embedded default is an in-process store with the same
 * contract (one process only). Both pass the same contract tests (test/integration/platform/counter-store.test.ts).
 */

export interface WindowHit {
  /** True when this hit is within the limit (and was counted). */
  allowed: boolean;
  /** Hits counted in the current window, including this one when allowed. */
  count: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

export type Unsubscribe = () => Promise<void>;

export interface CounterStore {
  readonly backend: 'redis' | 'memory';
  /** Round-trip check; resolves with the latency in ms or rejects when the store is unreachable. */
  ping(): Promise<number>;
  /** Fixed-window counter: count a hit against `limit` per `windowMs`. Refused hits are not counted. */
  hitWindow(key: string, limit: number, windowMs: number): Promise<WindowHit>;
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Set only when absent; true when this call set it. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  del(key: string): Promise<void>;
  incrBy(key: string, by: number, ttlMs?: number): Promise<number>;
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, onMessage: (message: string) => void): Promise<Unsubscribe>;
  close(): Promise<void>;
}
