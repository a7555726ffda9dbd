/**
 * SpendStore in process memory, for the embedded all-in-one (one gateway process). Same semantics as the Redis
 * scripts; JavaScript's run-to-completion makes each method atomic, as a Lua script is on Redis.
 */
import type { Admission, AdmitInput, HydrateInput, ReservationRef, SettleInput, SpendStore } from './spend-store.js';

interface OrgState {
  bal?: number;
  ver: number;
  mode?: 'prepaid' | 'card';
  susp: boolean;
  res: number;
  t: number;
  lim: number;
  gen: number;
}
interface SpendState {
  sp?: number;
  res: number;
}

export class MemorySpendStore implements SpendStore {
  private readonly orgs = new Map<string, OrgState>();
  private readonly keys = new Map<string, SpendState>();
  private readonly days = new Map<string, SpendState>();
  private readonly rates = new Map<string, { count: number; resetAt: number }>();
  private readonly idem = new Map<string, { value: string; expiresAt: number }>();
  private readonly open = new Map<string, ReservationRef & { expiresAt: number }>();

  private org(id: string): OrgState {
    let o = this.orgs.get(id);
    if (!o) this.orgs.set(id, (o = { ver: -1, susp: false, res: 0, t: 0, lim: 0, gen: 0 }));
    return o;
  }
  private spend(map: Map<string, SpendState>, id: string): SpendState {
    let s = map.get(id);
    if (!s) map.set(id, (s = { res: 0 }));
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
    const o = this.orgs.get(a.orgId);
    if (o?.bal === undefined || o.mode === undefined) return { outcome: 'hydrate', generation: o?.gen ?? 0 };
    const k = this.keys.get(a.keyId);
    const d = this.days.get(`${a.keyId}:${a.day}`);
    if (a.priceCents > 0 && (k?.sp === undefined || d?.sp === undefined))
      return { outcome: 'hydrate', generation: o.gen };
    const ancestors = a.ancestors.map((x) => ({ ...x, state: this.keys.get(x.keyId) }));
    if (a.priceCents > 0 && ancestors.some((x) => x.state?.sp === undefined)) {
      return { outcome: 'hydrate', generation: o.gen };
    }
    if (a.idempotencyKey !== null) {
      const rec = this.idemGet(a.idempotencyKey, a.nowMs);
      if (rec !== null) {
        if (rec.slice(2, 2 + a.requestHash.length) !== a.requestHash) return { outcome: 'mismatch' };
        if (rec.startsWith('p')) {
          return rec.endsWith(`|${a.reservationId}`) ? { outcome: 'admitted', stale: false } : { outcome: 'in_flight' };
        }
        return { outcome: 'replay', record: rec };
      }
    }
    const windowKey = `${a.rateKey}:${Math.floor(a.nowMs / 60_000)}`;
    let w = this.rates.get(windowKey);
    if (!w || w.resetAt <= a.nowMs) this.rates.set(windowKey, (w = { count: 0, resetAt: a.nowMs + 60_000 }));
    w.count += 1;
    if (w.count > a.ratePerMin) return { outcome: 'rate_limited', retryAfterMs: Math.max(w.resetAt - a.nowMs, 1) };
    if (o.susp) return { outcome: 'suspended' };
    if (a.priceCents > 0) {
      if (a.perCallMaxCents !== null && a.priceCents > a.perCallMaxCents) return { outcome: 'per_call' };
      if (a.budgetCents !== null && k!.sp! + k!.res + a.priceCents > a.budgetCents) return { outcome: 'budget' };
      for (const x of ancestors) {
        if (x.budgetCents !== null && x.state!.sp! + x.state!.res + a.priceCents > x.budgetCents) {
          return { outcome: 'budget', ancestorKeyId: x.keyId };
        }
      }
      if (a.dailyCapCents !== null && d!.sp! + d!.res + a.priceCents > a.dailyCapCents) return { outcome: 'daily_cap' };
      const headroom = o.bal - o.res;
      if (o.mode === 'card') {
        if (headroom + o.lim < a.priceCents) return { outcome: 'credit_limit' };
      } else if (headroom < a.priceCents) {
        return { outcome: 'funds' };
      }
      o.res += a.priceCents;
      k!.res += a.priceCents;
      d!.res += a.priceCents;
      for (const x of ancestors) x.state!.res += a.priceCents;
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
    if (a.idempotencyKey !== null) {
      this.idem.set(a.idempotencyKey, {
        value: `p|${a.requestHash}|${a.reservationId}`,
        expiresAt: a.nowMs + a.reservationTtlMs,
      });
    }
    return a.nowMs - o.t > a.staleAfterMs
      ? { outcome: 'admitted', stale: true, generation: o.gen }
      : { outcome: 'admitted', stale: false };
  }

  private release(ref: ReservationRef): boolean {
    if (ref.priceCents <= 0 || !this.open.delete(ref.reservationId)) return false;
    const o = this.org(ref.orgId);
    o.res = Math.max(0, o.res - ref.priceCents);
    const k = this.spend(this.keys, ref.keyId);
    k.res = Math.max(0, k.res - ref.priceCents);
    const d = this.spend(this.days, `${ref.keyId}:${ref.day}`);
    d.res = Math.max(0, d.res - ref.priceCents);
    for (const id of ref.ancestorKeyIds) {
      const x = this.spend(this.keys, id);
      x.res = Math.max(0, x.res - ref.priceCents);
    }
    return true;
  }

  settle(s: SettleInput): Promise<void> {
    this.release(s);
    if (s.org) {
      const o = this.orgs.get(s.orgId);
      if (o?.mode !== undefined && s.org.balanceVersion > o.ver) {
        o.bal = s.org.creditCents;
        o.ver = s.org.balanceVersion;
      }
    }
    if (s.key) {
      const k = this.keys.get(s.keyId);
      if (k?.sp !== undefined && s.key.spentCents > k.sp) k.sp = s.key.spentCents;
      const d = this.days.get(`${s.keyId}:${s.day}`);
      if (d?.sp !== undefined && s.key.daySpentCents > d.sp) d.sp = s.key.daySpentCents;
    }
    s.ancestorKeyIds.forEach((id, i) => {
      const spent = s.ancestorSpentCents?.[i];
      const x = this.keys.get(id);
      if (spent !== undefined && x?.sp !== undefined && spent > x.sp) x.sp = spent;
    });
    if (s.idempotencyKey !== null) {
      if (s.record !== null)
        this.idem.set(s.idempotencyKey, { value: s.record, expiresAt: s.nowMs + s.idempotencyTtlMs });
      else this.idem.delete(s.idempotencyKey);
    }
    return Promise.resolve();
  }

  async settleMany(inputs: readonly SettleInput[]): Promise<void> {
    for (const input of inputs) await this.settle(input);
  }

  void(ref: ReservationRef): Promise<boolean> {
    const wasOpen = this.release(ref);
    if (ref.idempotencyKey !== null) {
      const rec = this.idem.get(ref.idempotencyKey)?.value;
      if (rec?.startsWith('p') && rec.endsWith(ref.reservationId)) this.idem.delete(ref.idempotencyKey);
    }
    return Promise.resolve(wasOpen);
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
      }
    }
    return Promise.resolve();
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

  idempotencyRecord(key: string): Promise<string | null> {
    return Promise.resolve(this.idemGet(key, Date.now()));
  }
}
