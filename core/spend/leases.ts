/**
 * Leases (issue 23; docs/durability.md, "Leases"): instead of one admission round trip per call, a gateway process
 * reserves room for many calls of one (org, key, UTC day) at once (SpendStore.lease, the same checks as an admission,
 * held the same way) and admits calls against it in process. The invariant is kept where it always was: everything
 * held on the fast state never exceeds what may be spent, across processes, because a lease is held there before any
 * call uses it.
 *
 * - **Window.** A lease admits calls for at most `LEASE_WINDOW_MS` (1 s) from the moment it was asked for, so a
 *   revocation, a suspension or a tightened cap is seen within 1 s even with pub/sub lost. Then it closes: what its
 *   calls in flight need stays held, the rest (cents and rate tokens) is returned; when the last call ends, the lease
 *   is gone. A process that dies leaves its leases to the sweeper (released after the hold's expiry).
 * - **Exact mode.** When the slack under the tightest limit is under `MIN_CALLS` calls' worth (or the org is being
 *   recalled, or something would refuse), the store answers `exact` and this process admits that key's calls one by
 *   one, exactly as without leases, for `EXACT_HOLD_MS` before asking again.
 * - **Sizing.** A lease asks for 1.5 × the calls the key's previous lease admitted (at least `MIN_CALLS`), and the
 *   store grants at most half the slack, so other processes keep room. A key that makes fewer than `LEASE_MIN_RATE`
 *   calls a second is admitted call by call (a lease would cost it more scripts than it saves).
 * - **Recall.** A call-by-call refusal while leases admit on the org asks them back (SpendStore `leased`): no new
 *   lease for 2 s, the holders return their unused part within their window, and the refused call retries.
 * - Idempotent calls never use a lease: their claim is global, per call.
 */
import type { Logger } from '../logger.js';
import type { LeaseGrant, LeaseInput, LeaseRef, SpendStore } from './spend-store.js';

export const LEASE_WINDOW_MS = 1_000;
/** Under this many calls' worth of slack, calls are admitted one by one (exact mode). */
export const MIN_CALLS = 32;
/** After an `exact` answer, this key is admitted call by call for this long before a lease is asked for again. */
const EXACT_HOLD_MS = 1_000;
const MAX_CALLS = 100_000;
/** A key calls at least this often per second before a lease is asked for (below it, one script per call is less). */
export const LEASE_MIN_RATE = 16;
const MAX_RATES = 100_000;

export class Lease {
  /** Cents this process may still admit against the lease. */
  remaining: number;
  /** Rate tokens (calls) left. */
  tokens: number;
  inFlight = 0;
  /** What the calls in flight hold. */
  inFlightCents = 0;
  admitted = 0;
  closed = false;
  /** A call whose settle outcome is unknown: nothing is given back to this lease any more. */
  poisoned = false;

  constructor(
    readonly ref: LeaseRef,
    readonly slot: Slot,
    cents: number,
    tokens: number,
    /** performance.now() until which it admits. */
    readonly admitUntil: number,
    /** The same instant on the process's clock (a test's clock moved ahead closes it too). */
    readonly admitUntilClock: number,
  ) {
    this.remaining = cents;
    this.tokens = tokens;
  }
}

interface Slot {
  key: string;
  orgId: string;
  current: Lease | null;
  acquiring: Promise<LeaseGrant> | null;
  exactUntil: number;
  /** Calls the previous lease admitted (its window), for sizing the next. */
  lastAdmitted: number;
  /** Leases of the slot not finished yet. */
  openLeases: number;
}

/** What returning a lease needs (the shared lease names no key and no ancestors). */
function leaseRef(
  leaseId: string,
  orgId: string,
  input: Pick<LeaseInput, 'keyId' | 'day' | 'ancestors'>,
  rateWindow: string,
  shared: boolean,
): LeaseRef {
  return {
    leaseId,
    orgId,
    keyId: shared ? '' : input.keyId,
    day: input.day,
    ancestorKeyIds: shared ? [] : input.ancestors.map((a) => a.keyId),
    rateWindow,
    ...(shared ? { shared: true } : {}),
  };
}

export class LeaseBook {
  private readonly slots = new Map<string, Slot>();
  private readonly open = new Set<Lease>();

  constructor(
    private readonly spend: Required<Pick<SpendStore, 'lease' | 'returnLease'>>,
    private readonly log: Logger,
    /** The process's clock (ms): a window ends by it or by the monotonic clock, whichever comes first. */
    private readonly now: () => number = Date.now,
    /** Calls a second before a key is leased (tests lease at once with 0). */
    private readonly minRate = LEASE_MIN_RATE,
  ) {}

  /** One slot per (org, key, UTC day, key version): a changed key never admits on a lease taken before. */
  static slotKey(orgId: string, keyId: string, day: string, version: string | undefined): string {
    return `${orgId}|${keyId}|${day}|${version ?? ''}`;
  }

  /** The org's shared slot (per UTC day and the org's key version): its keys without governance of their own. */
  static sharedSlotKey(orgId: string, day: string, version: string | undefined): string {
    return `${orgId}||${day}|${version ?? ''}`;
  }

  /** Admit one call of `price` against this process's lease for the slot, or null (none, closed, used up). */
  take(slotKey: string, price: number): Lease | null {
    const lease = this.slots.get(slotKey)?.current;
    if (!lease || lease.closed) return null;
    if (performance.now() >= lease.admitUntil || this.now() >= lease.admitUntilClock) {
      this.close(lease);
      return null;
    }
    if (lease.tokens < 1 || lease.remaining < price) return null;
    lease.tokens -= 1;
    lease.remaining -= price;
    lease.inFlight += 1;
    lease.inFlightCents += price;
    lease.admitted += 1;
    return lease;
  }

  /** The slot has a lease admitting now, with a token and room for a call of `price`. */
  holds(slotKey: string, price: number): boolean {
    const lease = this.slots.get(slotKey)?.current;
    if (!lease || lease.closed || lease.tokens < 1 || lease.remaining < price) return false;
    return performance.now() < lease.admitUntil && this.now() < lease.admitUntilClock;
  }

  /**
   * The slot admits call by call for now: the store said `exact`, or the key is not busy enough for a lease to pay
   * (fewer than `LEASE_MIN_RATE` calls in its last second: a lease costs two scripts, a call by call admission one).
   */
  exact(slotKey: string): boolean {
    const slot = this.slots.get(slotKey);
    if (slot !== undefined && (slot.current !== null || slot.acquiring !== null)) return false;
    if (slot !== undefined && performance.now() < slot.exactUntil) return true;
    return !this.busy(slotKey);
  }

  /** Calls seen per slot in the current second (bounded: the least recently started windows are dropped). */
  private readonly rates = new Map<string, { since: number; count: number }>();

  private busy(slotKey: string): boolean {
    const now = performance.now();
    let rate = this.rates.get(slotKey);
    if (!rate || now - rate.since >= LEASE_WINDOW_MS) {
      const busy = rate !== undefined && now - rate.since < 2 * LEASE_WINDOW_MS && rate.count >= this.minRate;
      this.rates.delete(slotKey);
      if (this.rates.size >= MAX_RATES) {
        const oldest = this.rates.keys().next();
        if (!oldest.done) this.rates.delete(oldest.value);
      }
      rate = { since: now, count: 0 };
      this.rates.set(slotKey, rate);
      rate.count += 1;
      return busy;
    }
    rate.count += 1;
    return rate.count >= this.minRate;
  }

  /**
   * Ask the store for a lease for the slot (one request at a time per slot: concurrent callers share its answer).
   * `input` gets the lease id and the wanted amounts filled in.
   */
  acquire(
    slotKey: string,
    orgId: string,
    input: Omit<LeaseInput, 'leaseId' | 'wantCents' | 'wantTokens' | 'minCalls' | 'nowMs'>,
    leaseId: string,
    shared = false,
  ): Promise<LeaseGrant> {
    let slot = this.slots.get(slotKey);
    if (!slot) {
      slot = { key: slotKey, orgId, current: null, acquiring: null, exactUntil: 0, lastAdmitted: 0, openLeases: 0 };
      this.slots.set(slotKey, slot);
    }
    if (slot.acquiring) return slot.acquiring;
    const s = slot;
    const calls = Math.min(MAX_CALLS, Math.max(MIN_CALLS, Math.ceil(s.lastAdmitted * 1.5)));
    const startedAt = performance.now();
    const startedAtClock = this.now();
    const asked = this.spend
      .lease({
        ...input,
        leaseId,
        nowMs: Date.now(),
        wantCents: calls * input.priceCents,
        wantTokens: shared ? 0 : calls,
        minCalls: MIN_CALLS,
        ...(shared ? { kind: 'shared' as const, keyId: '' } : {}),
      })
      .then((grant) => {
        if (grant.outcome === 'exact') s.exactUntil = performance.now() + EXACT_HOLD_MS;
        if (grant.outcome === 'lease') {
          if (s.current) this.close(s.current);
          const ref = leaseRef(leaseId, orgId, input, grant.rateWindow, shared);
          // The window starts when the lease was asked for: never later than the store's own start.
          const lease = new Lease(
            ref,
            s,
            grant.cents,
            // The shared lease counts no tokens (each call takes its key's from the RateTokens book).
            shared ? Number.MAX_SAFE_INTEGER : grant.tokens,
            startedAt + LEASE_WINDOW_MS,
            startedAtClock + LEASE_WINDOW_MS,
          );
          s.current = lease;
          s.openLeases += 1;
          this.open.add(lease);
          setTimeout(() => this.close(lease), Math.max(0, lease.admitUntil - performance.now())).unref();
        }
        return grant;
      })
      .finally(() => {
        s.acquiring = null;
      });
    s.acquiring = asked;
    return asked;
  }

  /** A call taken from `lease` that will not run on it after all (its key had no rate token): the take is undone. */
  untake(lease: Lease, price: number): void {
    lease.admitted -= 1;
    lease.tokens += 1;
    this.ended(lease, price, false);
  }

  /**
   * A call admitted on `lease` ended. `charged`: its price left the lease on the fast state (settled, or its outcome
   * unknown); otherwise (it failed) the price is the lease's again.
   */
  ended(lease: Lease, price: number, charged: boolean): void {
    lease.inFlight -= 1;
    lease.inFlightCents -= price;
    if (!charged && !lease.closed && !lease.poisoned) lease.remaining += price;
    if (lease.closed && lease.inFlight === 0) this.finish(lease);
  }

  /** A call's settle outcome is unknown: the lease admits no more and gives nothing back in process. */
  poison(lease: Lease): void {
    lease.poisoned = true;
    this.close(lease);
  }

  /** Stop admitting on the org's leases now (a suspension, a billing-mode or key change announced). */
  dropOrg(orgId: string): void {
    for (const lease of this.open) if (lease.ref.orgId === orgId) this.close(lease);
    for (const [key, slot] of this.slots) if (slot.orgId === orgId && !slot.current) this.slots.delete(key);
  }

  /** Return every lease (shutdown): calls still in flight keep what they hold until they end. */
  closeAll(): void {
    for (const lease of this.open) this.close(lease);
  }

  /** The window ended: what the calls in flight hold stays, the rest and the unused tokens go back. */
  private close(lease: Lease): void {
    if (lease.closed) return;
    lease.closed = true;
    const slot = lease.slot;
    if (slot.current === lease) {
      slot.current = null;
      slot.lastAdmitted = lease.admitted;
      // A key busy enough for a lease stays busy: its next call asks for the next lease at once.
      if (lease.admitted >= this.minRate) this.rates.set(slot.key, { since: performance.now(), count: lease.admitted });
    }
    if (lease.inFlight === 0) {
      this.finish(lease, lease.tokens);
      return;
    }
    this.send(lease, lease.inFlightCents, lease.tokens);
  }

  /** The lease's last call ended (or it had none): whatever it still holds is released. */
  private finish(lease: Lease, unusedTokens = 0): void {
    if (!this.open.delete(lease)) return;
    this.send(lease, 0, unusedTokens);
    const slot = lease.slot;
    slot.openLeases -= 1;
    // An idle slot is forgotten (memory stays bounded by the keys in use); a key used again starts a new one.
    if (slot.openLeases === 0 && !slot.current && !slot.acquiring && performance.now() >= slot.exactUntil) {
      if (this.slots.get(slot.key) === slot) this.slots.delete(slot.key);
    }
  }

  private send(lease: Lease, keepCents: number, unusedTokens: number): void {
    this.spend.returnLease(lease.ref, keepCents, lease.ref.shared ? 0 : unusedTokens).catch((err: unknown) => {
      // The hold stays until the sweeper releases it (its expiry): never a loss, at worst room unused for a while.
      this.log.warn({ err, lease_id: lease.ref.leaseId }, 'lease return failed; the sweeper releases it');
    });
  }
}
