/**
 * The key layout of RedisSpendStore (core/spend/redis-spend-store.ts has the full description): every key of one
 * org's fast state carries the hash tag of the org's spend bucket, so every script touches one Cluster slot. Also how
 * an open reservation and a streamed usage entry are encoded.
 */
import type { ReservationRef, StreamedCall } from './spend-store.js';

export const DAY_TTL_MS = 3 * 86_400_000;
/** Part of the key layout: changing it moves every org to another bucket (a layout change, see the header). */
export const SPEND_BUCKETS = 1024;

/** The org's spend bucket: FNV-1a of the org id, modulo SPEND_BUCKETS. */
export function spendBucket(orgId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < orgId.length; i++) {
    h ^= orgId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % SPEND_BUCKETS;
}

/** The tags of the orgs seen lately (every key of a call is built from one; a few a call on the hot path). */
const tags = new Map<string, string>();
const MAX_TAGS = 100_000;

export function tag(orgId: string): string {
  let t = tags.get(orgId);
  if (t === undefined) {
    if (tags.size >= MAX_TAGS) tags.clear();
    t = `sp:{${spendBucket(orgId)}}`;
    tags.set(orgId, t);
  }
  return t;
}
export const orgKey = (orgId: string) => `${tag(orgId)}:o:${orgId}`;
export const keyKey = (orgId: string, keyId: string) => `${tag(orgId)}:k:${keyId}`;
export const dayKey = (orgId: string, keyId: string, day: string) => `${tag(orgId)}:d:${keyId}:${day}`;
export const resvKey = (orgId: string) => `${tag(orgId)}:resv`;
/** A lease's hash (core/spend/leases.ts): `rem` what it still holds, `live` 1 while it admits calls. */
export const leaseKey = (orgId: string, leaseId: string) => `${tag(orgId)}:l:${leaseId}`;
export const bucketResvKey = (bucket: number) => `sp:{${bucket}}:resv`;
export const idemKey = (orgId: string, k: string | null) => `${tag(orgId)}:i:${k ?? '-'}`;
/** The org's set of seen idempotency keys' short hashes (core/spend/idempotency-seen.ts). */
export const seenKey = (orgId: string) => `${tag(orgId)}:sn:${orgId}`;
/** The org's seen set's state: `ep` the rebuild epoch, `ok` = 1 once the set holds every booked key. */
export const seenStateKey = (orgId: string) => `${tag(orgId)}:sx:${orgId}`;
/** The bucket's usage stream: settled and failed calls not yet in Postgres (consumer group `drain`). */
export const usageStreamKey = (bucket: number) => `sp:{${bucket}}:u`;
/** Buckets claimed from concurrently (one pipelined wave of scripts). */
export const CLAIM_WAVE = 256;

/**
 * A streamed entry's fields back into its calls: `e` the records (core/spend/call-codec.ts) joined by newlines (a
 * record's JSON never holds a raw newline), `c` and `b` each call's credit applied and billable, joined by commas.
 */
export function streamedCalls(fields: string[]): StreamedCall[] {
  const f = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!, fields[i + 1]!);
  const events = (f.get('e') ?? '').split('\n');
  const credits = (f.get('c') ?? '0').split(',');
  const billables = (f.get('b') ?? '0').split(',');
  return events.map((event, i) => ({
    event,
    creditAppliedCents: Number(credits[i] ?? 0),
    billableCents: Number(billables[i] ?? 0),
  }));
}
/** Where the record of a scoped idempotency key (`org:key:client key`) lives (exported for tests). */
export const idempotencyRecordKey = (scoped: string) => idemKey(scoped.slice(0, scoped.indexOf(':')), scoped);
/** The rate window of a key prefix in a minute (exported for the benchmark, which pre-fills one). */
export const rateWindowKey = (orgId: string, rateKey: string, minute: number) =>
  `${tag(orgId)}:rl:${rateKey}:${minute}`;

/**
 * An open reservation is one member of its bucket's `resv` sorted set (scored by expiry) that carries what voiding it
 * needs: `reservation|org|key|day|price|ancestor,ancestor|idempotency key` (ids never contain `|` or `,`; the
 * idempotency key, which may, is last).
 */
export function memberOf(
  r: Pick<ReservationRef, 'reservationId' | 'orgId' | 'keyId' | 'day' | 'priceCents' | 'idempotencyKey'> & {
    ancestorKeyIds: readonly string[];
  },
) {
  return `${r.reservationId}|${r.orgId}|${r.keyId}|${r.day}|${r.priceCents}|${r.ancestorKeyIds.join(',')}|${r.idempotencyKey ?? ''}`;
}

export function parseMember(member: string): ReservationRef {
  const [reservationId, orgId, keyId, day, price, ancestors, ...idem] = member.split('|');
  const idempotencyKey = idem.join('|');
  return {
    reservationId: reservationId!,
    orgId: orgId!,
    keyId: keyId!,
    ancestorKeyIds: ancestors ? ancestors.split(',') : [],
    day: day!,
    priceCents: Number(price),
    idempotencyKey: idempotencyKey === '' ? null : idempotencyKey,
  };
}
