/**
 * The in-process twin of the Redis seen sets (core/spend/redis-spend-lua.ts: ADMIT's seen check, SETTLE's SADD,
 * SEEN_EPOCH, SEEN_COMPLETE): per org, the short hashes of every idempotent call it booked, a rebuild epoch and the
 * "complete" stamp. The in-process store's data lives and dies with the process, so a fresh process starts unstamped
 * and rebuilds from Postgres, as a Redis that lost its data does.
 */
import { randomBytes } from 'node:crypto';
import type { SeenCheck } from './spend-store.js';

interface SeenSet {
  hashes: Set<string>;
  epoch?: string;
  complete: boolean;
}

export class MemorySeenSets {
  private readonly orgs = new Map<string, SeenSet>();

  private of(orgId: string): SeenSet {
    let s = this.orgs.get(orgId);
    if (!s) this.orgs.set(orgId, (s = { hashes: new Set(), complete: false }));
    return s;
  }

  /** As the admission script: '' when Postgres must be asked without a rebuild (the caller's fast path is off). */
  check(orgId: string, hash: string | undefined, fastPath: boolean): SeenCheck | '' {
    if (hash === undefined || hash === '') return '';
    const s = this.orgs.get(orgId);
    if (!s?.complete) return 'unstamped';
    if (s.hashes.has(hash)) return 'seen';
    return fastPath ? 'new' : '';
  }

  add(orgId: string, hash: string): void {
    this.of(orgId).hashes.add(hash);
  }

  epoch(orgId: string): string {
    const s = this.of(orgId);
    s.epoch ??= `${Date.now()}.${randomBytes(6).toString('hex')}`;
    return s.epoch;
  }

  complete(orgId: string, epoch: string): boolean {
    const s = this.orgs.get(orgId);
    if (s?.epoch !== epoch) return false;
    s.complete = true;
    return true;
  }
}
