/**
 * Small in-process memos that let the money path answer without a Redis round trip when the answer cannot have changed:
 * a stored idempotent replay (immutable once written) and a key prefix already over its rate limit (a fixed window's
 * count only grows until the window ends). Both are bounded (oldest entries evicted first) and expire on their own.
 */
export class ExpiringMemo<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(private readonly maxEntries: number) {}

  get(key: string, nowMs: number): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt <= nowMs) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: string, value: V, expiresAt: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt });
    if (this.entries.size > this.maxEntries) {
      // Maps iterate in insertion order: the first key is the oldest.
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
