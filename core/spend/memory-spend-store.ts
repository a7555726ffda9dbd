/**
 * SpendStore in process memory, for the embedded all-in-one (one gateway process). Same semantics as the Redis
 * scripts; JavaScript's run-to-completion makes each method atomic, as a Lua script is on Redis. Its usage "stream"
 * lives and dies with the process (the embedded mode's durability: docs/durability.md).
 */
import { chargeCall } from '../money/money-rules.js';
import { MemorySeenSets } from './memory-seen-sets.js';
import {
  recordAnswer,
  spendRefusal,
  type HeldAncestor,
  type OrgState,
  type SpendState,
} from './memory-spend-checks.js';
import type {
  Admission,
  AdmitInput,
  HydrateInput,
  ReservationRef,
  SettleBatchOutcome,
  SettleInput,
  SettleOutcome,
  SpendStore,
  StreamedCall,
  StreamedUsage,
  UsageAck,
  UsageEntryRef,
} from './spend-store.js';

/** One entry of the in-process stream (a settle batch's calls), delivered at once (to this process's one drainer). */
interface StreamEntry {
  calls: StreamedCall[];
  deliveredAt: number;
}

export class MemorySpendStore implements SpendStore {
  private readonly orgs = new Map<string, OrgState>();
  /** Per org, the version of its keys (SpendStore.keysChanged). */
  private readonly keyVersions = new Map<string, string>();
  private keyVersionSeq = 0;
  private readonly keys = new Map<string, SpendState>();
  private readonly days = new Map<string, SpendState>();
  private readonly rates = new Map<string, { count: number; resetAt: number }>();
  private readonly idem = new Map<string, { value: string; expiresAt: number }>();
  private readonly open = new Map<string, ReservationRef & { expiresAt: number }>();
  private readonly stream = new Map<string, StreamEntry>();
  private readonly seen = new MemorySeenSets();
  private nextEntry = 0;

  private org(id: string): OrgState {
    let o = this.orgs.get(id);
    if (!o) this.orgs.set(id, (o = { ver: -1, susp: false, res: 0, pend: 0, pn: 0, t: 0, lim: 0, gen: 0 }));
    return o;
  }
  private spend(map: Map<string, SpendState>, id: string): SpendState {
    let s = map.get(id);
    if (!s) map.set(id, (s = { res: 0, pend: 0 }));
    return s;
  }
  private idemGet(key: string, now: number): string | null {
    const hit = this.idem.get(key);
    if (!hit) return null;
    if (hit.expiresAt <= now) {
      this.idem.delete(key);
      return null;
    }
    return hit.value;
  }

  private prunedAt = 0;

  admit(a: AdmitInput): Promise<Admission> {
    if (a.nowMs - this.prunedAt > 60_000) this.prune(a.nowMs);
    return Promise.resolve(this.admitNow(a));
  }

  /** Drop what can no longer matter (expired idempotency records, past rate windows), at most once a minute. */
  private prune(nowMs: number): void {
    this.prunedAt = nowMs;
    for (const [key, entry] of this.idem) if (entry.expiresAt <= nowMs) this.idem.delete(key);
    for (const [key, window] of this.rates) if (window.resetAt <= nowMs) this.rates.delete(key);
  }

  private admitNow(a: AdmitInput): Admission {
    // Idempotent per reservation, like the script: a second run of one admission changes nothing.
    if (a.priceCents > 0 && this.open.has(a.reservationId)) return { outcome: 'admitted', stale: false };
    if (a.keyVersion !== undefined) {
      const kv = this.keyVersions.get(a.orgId) ?? this.newKeyVersion(a.orgId);
      if (kv !== a.keyVersion) return { outcome: 'stale_key', version: kv };
    }
    const o = this.orgs.get(a.orgId);
    if (o?.bal === undefined || o.mode === undefined) return { outcome: 'hydrate', generation: o?.gen ?? 0 };
    const k = this.keys.get(a.keyId);
    const d = this.days.get(`${a.keyId}:${a.day}`);
    if (a.priceCents > 0 && (k?.sp === undefined || d?.sp === undefined))
      return { outcome: 'hydrate', generation: o.gen };
    const ancestors = a.ancestors.map((x) => ({
      ...x,
      state: this.keys.get(x.keyId),
      day: this.days.get(`${x.keyId}:${a.day}`),
    }));
    if (a.priceCents > 0 && ancestors.some((x) => x.state?.sp === undefined || x.day?.sp === undefined)) {
      return { outcome: 'hydrate', generation: o.gen };
    }
    if (a.idempotencyKey !== null) {
      const rec = this.idemGet(a.idempotencyKey, a.nowMs);
      if (rec !== null) return recordAnswer(rec, a);
    }
    const seenCheck = a.idempotencyKey === null ? '' : this.seen.check(a.orgId, a.seenHash, a.fastPath === true);
    const windowKey = `${a.rateKey}:${Math.floor(a.nowMs / 60_000)}`;
    let w = this.rates.get(windowKey);
    if (!w || w.resetAt <= a.nowMs) this.rates.set(windowKey, (w = { count: 0, resetAt: a.nowMs + 60_000 }));
    w.count += 1;
    if (w.count > a.ratePerMin) return { outcome: 'rate_limited', retryAfterMs: Math.max(w.resetAt - a.nowMs, 1) };
    if (o.susp) return { outcome: 'suspended' };
    if (a.priceCents > 0) {
      const refusal = spendRefusal(a, o, k!, d!, ancestors);
      if (refusal) return refusal;
      this.hold(a, o, k!, d!, ancestors);
    }
    if (a.idempotencyKey !== null) {
      this.idem.set(a.idempotencyKey, {
        value: `p|${a.requestHash}|${a.reservationId}`,
        expiresAt: a.nowMs + a.reservationTtlMs,
      });
    }
    const admitted: Admission =
      a.nowMs - o.t > a.staleAfterMs
        ? { outcome: 'admitted', stale: true, generation: o.gen }
        : { outcome: 'admitted', stale: false };
    if (seenCheck !== '') admitted.idempotency = seenCheck;
    return admitted;
  }

  /** The paid call's reservation: its price held on the org, the key, its day and every ancestor's, until settled. */
  private hold(a: AdmitInput, o: OrgState, k: SpendState, d: SpendState, ancestors: readonly HeldAncestor[]): void {
    o.res += a.priceCents;
    k.res += a.priceCents;
    d.res += a.priceCents;
    for (const x of ancestors) {
      x.state!.res += a.priceCents;
      x.day!.res += a.priceCents;
    }
    this.open.set(a.reservationId, {
      reservationId: a.reservationId,
      orgId: a.orgId,
      keyId: a.keyId,
      ancestorKeyIds: a.ancestors.map((x) => x.keyId),
      day: a.day,
      priceCents: a.priceCents,
      idempotencyKey: a.idempotencyKey,
      expiresAt: a.nowMs + a.reservationTtlMs,
    });
  }

  /** The spend states a reservation holds: the key, the key's day, each ancestor and each ancestor's day. */
  private held(ref: Pick<ReservationRef, 'keyId' | 'day' | 'ancestorKeyIds'>): SpendState[] {
    return [
      this.spend(this.keys, ref.keyId),
      this.spend(this.days, `${ref.keyId}:${ref.day}`),
      ...ref.ancestorKeyIds.map((id) => this.spend(this.keys, id)),
      ...ref.ancestorKeyIds.map((id) => this.spend(this.days, `${id}:${ref.day}`)),
    ];
  }

  private release(ref: ReservationRef): boolean {
    if (ref.priceCents <= 0 || !this.open.delete(ref.reservationId)) return false;
    const o = this.org(ref.orgId);
    o.res = Math.max(0, o.res - ref.priceCents);
    for (const s of this.held(ref)) s.res = Math.max(0, s.res - ref.priceCents);
    return true;
  }

  private append(calls: StreamedCall[]): string {
    const id = `${++this.nextEntry}`;
    this.stream.set(id, { calls, deliveredAt: Date.now() });
    return id;
  }

  settle(s: SettleInput): Promise<SettleOutcome> {
    return this.settleBatch([s]).then((b) => b.results[0]!);
  }

  batchKey(): string {
    return 'memory';
  }

  settleBatch(batch: readonly SettleInput[]): Promise<SettleBatchOutcome> {
    const calls: StreamedCall[] = [];
    const charged: { credit: number; billable: number }[] = [];
    const results = batch.map((s): SettleOutcome | null => {
      let credit = 0;
      let billable = 0;
      if (s.priceCents > 0) {
        if (!this.release(s)) return { outcome: 'gone' };
        const o = this.org(s.orgId);
        const charge = chargeCall(s.priceCents, (o.bal ?? 0) - o.pend, o.mode ?? 'prepaid');
        credit = charge.creditAppliedCents;
        billable = charge.billableCents;
        o.pend += s.priceCents;
        for (const x of this.held(s)) x.pend += s.priceCents;
      }
      this.org(s.orgId).pn += 1;
      calls.push({ event: s.event, creditAppliedCents: credit, billableCents: billable });
      charged.push({ credit, billable });
      if (s.idempotencyKey !== null && s.record !== null) {
        const value = `${s.record.head}${credit}${s.record.middle}${billable}${s.record.tail}`;
        this.idem.set(s.idempotencyKey, { value, expiresAt: s.nowMs + s.idempotencyTtlMs });
        if (s.seenHash) this.seen.add(s.orgId, s.seenHash);
      }
      return null;
    });
    const entry = calls.length > 0 ? { stream: 'memory', id: this.append(calls) } : null;
    let next = 0;
    return Promise.resolve({
      entry,
      results: results.map((r): SettleOutcome => {
        if (r !== null) return r;
        const { credit, billable } = charged[next++]!;
        return { outcome: 'settled', creditAppliedCents: credit, billableCents: billable, entry: entry! };
      }),
    });
  }

  void(ref: ReservationRef): Promise<boolean> {
    const wasOpen = this.release(ref);
    if (ref.idempotencyKey !== null) {
      const rec = this.idem.get(ref.idempotencyKey)?.value;
      if (rec?.startsWith('p') && rec.endsWith(ref.reservationId)) this.idem.delete(ref.idempotencyKey);
    }
    return Promise.resolve(wasOpen);
  }

  async fail(ref: ReservationRef, failedEvent: string): Promise<UsageEntryRef> {
    await this.void(ref);
    this.org(ref.orgId).pn += 1;
    return { stream: 'memory', id: this.append([{ event: failedEvent, creditAppliedCents: 0, billableCents: 0 }]) };
  }

  ackUsage(acks: readonly UsageAck[]): Promise<void> {
    const acked = new Set<string>();
    for (const a of acks) if (this.stream.delete(a.entry.id)) acked.add(a.entry.id);
    for (const a of acks) {
      if (acked.has(a.entry.id)) {
        const o = this.org(a.orgId);
        o.pn = Math.max(0, o.pn - 1);
        if (a.pendingCents > 0) {
          o.pend = Math.max(0, o.pend - a.pendingCents);
          for (const x of this.held(a)) x.pend = Math.max(0, x.pend - a.pendingCents);
        }
      }
      if (a.org) {
        const o = this.orgs.get(a.orgId);
        if (o?.mode !== undefined && a.org.balanceVersion > o.ver) {
          o.bal = a.org.creditCents;
          o.ver = a.org.balanceVersion;
        }
      }
      if (a.key) {
        const k = this.keys.get(a.keyId);
        if (k?.sp !== undefined && a.key.spentCents > k.sp) k.sp = a.key.spentCents;
        const d = this.days.get(`${a.keyId}:${a.day}`);
        if (d?.sp !== undefined && a.key.daySpentCents > d.sp) d.sp = a.key.daySpentCents;
      }
      a.ancestorKeyIds.forEach((id, i) => {
        const spent = a.ancestorSpentCents?.[i];
        const x = this.keys.get(id);
        if (spent !== undefined && x?.sp !== undefined && spent > x.sp) x.sp = spent;
        const daySpent = a.ancestorDaySpentCents?.[i];
        const xd = this.days.get(`${id}:${a.day}`);
        if (daySpent !== undefined && xd?.sp !== undefined && daySpent > xd.sp) xd.sp = daySpent;
      });
    }
    return Promise.resolve();
  }

  claimUsage(minIdleMs: number, limit: number): Promise<StreamedUsage[]> {
    const out: StreamedUsage[] = [];
    const now = Date.now();
    for (const [id, e] of this.stream) {
      if (out.length >= limit) break;
      if (now - e.deliveredAt < minIdleMs) continue;
      e.deliveredAt = now;
      out.push({ entry: { stream: 'memory', id }, calls: e.calls });
    }
    return Promise.resolve(out);
  }

  pendingUsage(orgId: string): Promise<number> {
    return Promise.resolve(this.orgs.get(orgId)?.pn ?? 0);
  }

  hydrate(h: HydrateInput): Promise<void> {
    const o = this.org(h.orgId);
    if (h.org.balanceVersion >= o.ver) {
      o.bal = h.org.creditCents;
      o.ver = h.org.balanceVersion;
    }
    if (h.generation === undefined || h.generation === o.gen) {
      o.mode = h.org.billingMode;
      o.susp = h.org.suspended;
      o.lim = h.org.creditLimitCents;
      o.t = h.nowMs;
    }
    if (h.key && h.keyId && h.day) {
      const k = this.spend(this.keys, h.keyId);
      if (k.sp === undefined || h.key.spentCents > k.sp) k.sp = h.key.spentCents;
      const d = this.spend(this.days, `${h.keyId}:${h.day}`);
      if (d.sp === undefined || h.key.daySpentCents > d.sp) d.sp = h.key.daySpentCents;
      for (const a of h.ancestors ?? []) {
        const x = this.spend(this.keys, a.keyId);
        if (x.sp === undefined || a.spentCents > x.sp) x.sp = a.spentCents;
        const xd = this.spend(this.days, `${a.keyId}:${h.day}`);
        if (xd.sp === undefined || a.daySpentCents > xd.sp) xd.sp = a.daySpentCents;
      }
    }
    return Promise.resolve();
  }

  keysChanged(orgId: string): Promise<void> {
    this.newKeyVersion(orgId);
    return Promise.resolve();
  }

  private newKeyVersion(orgId: string): string {
    const kv = String(++this.keyVersionSeq);
    this.keyVersions.set(orgId, kv);
    return kv;
  }

  forgetOrg(orgId: string): Promise<void> {
    const o = this.org(orgId);
    o.gen += 1;
    o.mode = undefined;
    o.t = 0;
    return Promise.resolve();
  }

  expired(nowMs: number, limit: number): Promise<ReservationRef[]> {
    const out: ReservationRef[] = [];
    for (const r of this.open.values()) {
      if (out.length >= limit) break;
      if (r.expiresAt <= nowMs) {
        const { expiresAt: _expiresAt, ...ref } = r;
        out.push(ref);
      }
    }
    return Promise.resolve(out);
  }

  addSeen(entries: readonly { orgId: string; hash: string }[]): Promise<void> {
    for (const e of entries) this.seen.add(e.orgId, e.hash);
    return Promise.resolve();
  }

  seenEpoch(orgId: string): Promise<string> {
    return Promise.resolve(this.seen.epoch(orgId));
  }

  completeSeen(orgId: string, epoch: string): Promise<boolean> {
    return Promise.resolve(this.seen.complete(orgId, epoch));
  }

  idempotencyRecord(key: string): Promise<string | null> {
    return Promise.resolve(this.idemGet(key, Date.now()));
  }
}
