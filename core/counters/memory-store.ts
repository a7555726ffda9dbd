/** In-process CounterStore for the embedded, single-process mode. Same contract as Redis, no persistence. */
import { EventEmitter } from 'node:events';
import type { CounterStore, Unsubscribe, WindowHit } from './counter-store.js';

interface Entry {
  value: string;
  expiresAt: number | null;
}

export class MemoryCounterStore implements CounterStore {
  readonly backend = 'memory' as const;
  private readonly data = new Map<string, Entry>();
  private readonly bus = new EventEmitter();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly keyPrefix = '',
    private readonly now: () => number = Date.now,
  ) {
    this.bus.setMaxListeners(0);
    this.sweeper = setInterval(() => this.sweep(), 30_000);
    this.sweeper.unref();
  }

  ping(): Promise<number> {
    return Promise.resolve(0);
  }

  private read(key: string): Entry | undefined {
    const k = this.keyPrefix + key;
    const e = this.data.get(k);
    if (e && e.expiresAt !== null && e.expiresAt <= this.now()) {
      this.data.delete(k);
      return undefined;
    }
    return e;
  }

  private write(key: string, value: string, ttlMs?: number, keepTtl = false): void {
    const k = this.keyPrefix + key;
    const prev = this.data.get(k);
    const expiresAt = ttlMs !== undefined ? this.now() + ttlMs : keepTtl && prev ? prev.expiresAt : null;
    this.data.set(k, { value, expiresAt });
  }

  hitWindow(key: string, limit: number, windowMs: number): Promise<WindowHit> {
    const e = this.read(key);
    const now = this.now();
    const count = e ? Number(e.value) : 0;
    const resetMs = e?.expiresAt ? e.expiresAt - now : windowMs;
    if (count >= limit) return Promise.resolve({ allowed: false, count, resetMs });
    if (e) this.write(key, String(count + 1), undefined, true);
    else this.write(key, '1', windowMs);
    return Promise.resolve({ allowed: true, count: count + 1, resetMs });
  }

  get(key: string): Promise<string | null> {
    return Promise.resolve(this.read(key)?.value ?? null);
  }

  set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.write(key, value, ttlMs);
    return Promise.resolve();
  }

  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.read(key)) return Promise.resolve(false);
    this.write(key, value, ttlMs);
    return Promise.resolve(true);
  }

  del(key: string): Promise<void> {
    this.data.delete(this.keyPrefix + key);
    return Promise.resolve();
  }

  incrBy(key: string, by: number, ttlMs?: number): Promise<number> {
    const e = this.read(key);
    const next = (e ? Number(e.value) : 0) + by;
    if (e) this.write(key, String(next), ttlMs, ttlMs === undefined);
    else this.write(key, String(next), ttlMs);
    return Promise.resolve(next);
  }

  publish(channel: string, message: string): Promise<void> {
    // Deliver asynchronously, like a real broker, so publishers never run subscriber code inline.
    setImmediate(() => this.bus.emit(this.keyPrefix + channel, message));
    return Promise.resolve();
  }

  subscribe(channel: string, onMessage: (message: string) => void): Promise<Unsubscribe> {
    const name = this.keyPrefix + channel;
    this.bus.on(name, onMessage);
    return Promise.resolve(() => {
      this.bus.off(name, onMessage);
      return Promise.resolve();
    });
  }

  private sweep(): void {
    const now = this.now();
    for (const [k, e] of this.data) if (e.expiresAt !== null && e.expiresAt <= now) this.data.delete(k);
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    this.bus.removeAllListeners();
    this.data.clear();
    return Promise.resolve();
  }
}
