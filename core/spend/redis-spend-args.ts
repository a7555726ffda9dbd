/**
 * The keys and arguments of RedisSpendStore's scripts (core/spend/redis-spend-store.ts), in each script's order
 * (core/spend/redis-spend-lua.ts). Plain functions of their inputs: the store only adds the call.
 */
import {
  DAY_TTL_MS,
  dayKey,
  idemKey,
  keyKey,
  leaseKey,
  memberOf,
  orgKey,
  rateWindowKey,
  resvKey,
  seenKey,
  seenStateKey,
  spendBucket,
  usageStreamKey,
} from './redis-spend-keys.js';
import type {
  AdmitInput,
  HydrateInput,
  LeaseInput,
  LeaseRef,
  ReservationRef,
  SettleInput,
  UsageAck,
} from './spend-store.js';

type Args = (string | number)[];

/** ADMIT's keys: the org, the key and its day, the rate window, the idempotency record, the bucket's reservations. */
export function admitKeys(a: AdmitInput, ancestorIds: readonly string[]): string[] {
  return [
    orgKey(a.orgId),
    keyKey(a.orgId, a.keyId),
    dayKey(a.orgId, a.keyId, a.day),
    rateWindowKey(a.orgId, a.rateKey, Math.floor(a.nowMs / 60_000)),
    idemKey(a.orgId, a.idempotencyKey),
    resvKey(a.orgId),
    seenKey(a.orgId),
    seenStateKey(a.orgId),
    ...ancestorIds.map((id) => keyKey(a.orgId, id)),
    ...ancestorIds.map((id) => dayKey(a.orgId, id, a.day)),
  ];
}

export function admitArgs(a: AdmitInput, ancestorIds: readonly string[], offsetMs: number): Args {
  return [
    a.priceCents,
    a.budgetCents ?? -1,
    a.dailyCapCents ?? -1,
    a.ratePerMin,
    60_000,
    offsetMs,
    a.reservationId,
    a.reservationTtlMs,
    a.idempotencyKey === null ? '0' : '1',
    a.requestHash,
    a.staleAfterMs,
    memberOf({ ...a, ancestorKeyIds: ancestorIds }),
    a.perCallMaxCents ?? -1,
    a.keyVersion ?? '',
    a.seenHash ?? '',
    a.fastPath ? '1' : '0',
    a.noRecall ? '1' : '0',
    ...a.ancestors.map((x) => x.budgetCents ?? -1),
    ...a.ancestors.map((x) => x.dailyCapCents ?? -1),
  ];
}

/**
 * SETTLE's arguments for a batch (one bucket, or any buckets on a single server); `keys` (the first call's bucket's
 * stream) gets every other key the batch touches, each once, and the arguments refer to them by position.
 */
export function settleArgs(batch: readonly SettleInput[], consumer: string, keys: string[]): Args {
  const index = new Map<string, number>();
  const at = (key: string) => {
    let i = index.get(key);
    if (i === undefined) index.set(key, (i = keys.push(key)));
    return i;
  };
  const args: Args = [consumer, batch[0]!.idempotencyTtlMs, batch.length];
  for (const s of batch) {
    const idem = s.idempotencyKey !== null && s.record !== null;
    const held = [keyKey(s.orgId, s.keyId), dayKey(s.orgId, s.keyId, s.day)];
    for (const id of s.ancestorKeyIds) held.push(keyKey(s.orgId, id));
    for (const id of s.ancestorKeyIds) held.push(dayKey(s.orgId, id, s.day));
    // A call of the org's shared lease held nothing on its key and day: their pending spend only grows (negative).
    const sign = s.sharedLease ? -1 : 1;
    args.push(
      s.priceCents,
      s.leaseId ? '' : memberOf(s),
      s.leaseId ? 0 : at(resvKey(s.orgId)),
      at(orgKey(s.orgId)),
      idem ? at(idemKey(s.orgId, s.idempotencyKey)) : 0,
      s.record?.head ?? '',
      s.record?.middle ?? '',
      s.record?.tail ?? '',
      idem && s.seenHash ? at(seenKey(s.orgId)) : 0,
      s.seenHash ?? '',
      s.event,
      s.leaseId && s.priceCents > 0 ? at(leaseKey(s.orgId, s.leaseId)) : 0,
      held.length,
      ...held.map((key) => sign * at(key)),
    );
  }
  return args;
}

/** The keys a reservation holds, in the settle and void scripts' order. */
export function heldKeys(r: ReservationRef): string[] {
  return [
    orgKey(r.orgId),
    keyKey(r.orgId, r.keyId),
    dayKey(r.orgId, r.keyId, r.day),
    resvKey(r.orgId),
    idemKey(r.orgId, r.idempotencyKey),
    usageStreamKey(spendBucket(r.orgId)),
    leaseKey(r.orgId, r.reservationId), // read only when the reservation is a lease
    ...r.ancestorKeyIds.map((id) => keyKey(r.orgId, id)),
    ...r.ancestorKeyIds.map((id) => dayKey(r.orgId, id, r.day)),
  ];
}

export function leaseKeys(l: LeaseInput, rateWindow: string): string[] {
  // The shared lease names no key (its script reads neither; the org's hash stands in, in the same slot).
  const shared = l.kind === 'shared';
  return [
    orgKey(l.orgId),
    shared ? orgKey(l.orgId) : keyKey(l.orgId, l.keyId),
    shared ? orgKey(l.orgId) : dayKey(l.orgId, l.keyId, l.day),
    shared ? orgKey(l.orgId) : rateWindow,
    resvKey(l.orgId),
    leaseKey(l.orgId, l.leaseId),
    ...l.ancestors.map((x) => keyKey(l.orgId, x.keyId)),
    ...l.ancestors.map((x) => dayKey(l.orgId, x.keyId, l.day)),
  ];
}

export function leaseArgs(l: LeaseInput, offsetMs: number): Args {
  return [
    l.priceCents,
    l.budgetCents ?? -1,
    l.dailyCapCents ?? -1,
    l.ratePerMin,
    60_000,
    offsetMs,
    l.holdTtlMs,
    l.staleAfterMs,
    leaseMember({
      ...l,
      keyId: l.kind === 'shared' ? '' : l.keyId,
      ancestorKeyIds: l.ancestors.map((x) => x.keyId),
    }),
    l.perCallMaxCents ?? -1,
    l.keyVersion ?? '',
    l.wantCents,
    l.wantTokens,
    l.minCalls,
    l.kind ?? '',
    ...l.ancestors.map((x) => x.budgetCents ?? -1),
    ...l.ancestors.map((x) => x.dailyCapCents ?? -1),
  ];
}

export function leaseReturnKeys(ref: LeaseRef): string[] {
  // The shared lease held only the org (it never gives tokens back: it took none).
  if (ref.shared) return [orgKey(ref.orgId), resvKey(ref.orgId), leaseKey(ref.orgId, ref.leaseId), orgKey(ref.orgId)];
  return [
    orgKey(ref.orgId),
    resvKey(ref.orgId),
    leaseKey(ref.orgId, ref.leaseId),
    ref.rateWindow,
    keyKey(ref.orgId, ref.keyId),
    dayKey(ref.orgId, ref.keyId, ref.day),
    ...ref.ancestorKeyIds.map((id) => keyKey(ref.orgId, id)),
    ...ref.ancestorKeyIds.map((id) => dayKey(ref.orgId, id, ref.day)),
  ];
}

/** A lease's member of its bucket's reservation set: the sweeper voids it like a reservation (VOID reads its hash). */
export function leaseMember(l: Pick<LeaseRef, 'leaseId' | 'orgId' | 'keyId' | 'day' | 'ancestorKeyIds'>): string {
  return memberOf({ ...l, reservationId: l.leaseId, priceCents: 0, idempotencyKey: null });
}

/** HYDRATE's keys and arguments: the org, and with `h.key` the key, its day and its ancestors' (else placeholders). */
export function hydrateCall(h: HydrateInput, offsetMs: number): { keys: string[]; args: Args } {
  const hasKey = h.key !== undefined && h.keyId !== undefined && h.day !== undefined;
  const ancestors = hasKey ? (h.ancestors ?? []) : [];
  const keys = [
    orgKey(h.orgId),
    keyKey(h.orgId, h.keyId ?? '-'),
    dayKey(h.orgId, h.keyId ?? '-', h.day ?? '-'),
    ...ancestors.map((x) => keyKey(h.orgId, x.keyId)),
    ...ancestors.map((x) => dayKey(h.orgId, x.keyId, h.day!)),
  ];
  const args = [
    h.org.creditCents,
    h.org.balanceVersion,
    h.org.billingMode,
    h.org.suspended ? '1' : '0',
    offsetMs,
    hasKey ? '1' : '0',
    h.key?.spentCents ?? 0,
    h.key?.daySpentCents ?? 0,
    DAY_TTL_MS,
    h.org.creditLimitCents,
    h.generation ?? '',
    ...ancestors.map((x) => x.spentCents),
    ...ancestors.map((x) => x.daySpentCents),
  ];
  return { keys, args };
}

/** The ACK script's keys and arguments for one bucket's entries (each entry's acks: every call of the entry). */
export function ackArgs(
  bucket: number,
  entries: Map<string, UsageAck[]>,
): { keys: string[]; args: (string | number)[] } {
  const keys = [usageStreamKey(bucket)];
  const index = new Map<string, number>();
  const at = (key: string) => {
    let i = index.get(key);
    if (i === undefined) index.set(key, (i = keys.push(key)));
    return i;
  };
  const args: (string | number)[] = [entries.size];
  const balances = new Map<string, { creditCents: number; balanceVersion: number }>();
  const spent = new Map<string, number>();
  const keepMax = (key: string, value: number | undefined) => {
    if (value !== undefined && value > (spent.get(key) ?? -1)) spent.set(key, value);
  };
  for (const [id, calls] of entries) {
    const releases = new Map<string, number>(); // "index field" -> amount
    const release = (key: string, field: string, amount: number) => {
      const slot = `${at(key)} ${field}`;
      releases.set(slot, (releases.get(slot) ?? 0) + amount);
    };
    for (const a of calls) {
      const org = orgKey(a.orgId);
      release(org, 'pn', 1);
      if (a.pendingCents > 0) {
        release(org, 'pend', a.pendingCents);
        release(keyKey(a.orgId, a.keyId), 'pend', a.pendingCents);
        release(dayKey(a.orgId, a.keyId, a.day), 'pend', a.pendingCents);
        for (const anc of a.ancestorKeyIds) {
          release(keyKey(a.orgId, anc), 'pend', a.pendingCents);
          release(dayKey(a.orgId, anc, a.day), 'pend', a.pendingCents);
        }
      }
      if (a.org && a.org.balanceVersion > (balances.get(org)?.balanceVersion ?? -1)) balances.set(org, a.org);
      if (a.key) {
        keepMax(keyKey(a.orgId, a.keyId), a.key.spentCents);
        keepMax(dayKey(a.orgId, a.keyId, a.day), a.key.daySpentCents);
      }
      a.ancestorKeyIds.forEach((anc, i) => {
        keepMax(keyKey(a.orgId, anc), a.ancestorSpentCents?.[i]);
        keepMax(dayKey(a.orgId, anc, a.day), a.ancestorDaySpentCents?.[i]);
      });
    }
    args.push(id, releases.size);
    for (const [slot, amount] of releases) {
      const space = slot.indexOf(' ');
      args.push(Number(slot.slice(0, space)), slot.slice(space + 1), amount);
    }
  }
  args.push(balances.size);
  for (const [org, b] of balances) args.push(at(org), b.creditCents, b.balanceVersion);
  args.push(spent.size);
  for (const [key, value] of spent) args.push(at(key), value);
  return { keys, args };
}
