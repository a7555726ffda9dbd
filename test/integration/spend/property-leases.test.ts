// Leases as a property (issue 23; fast-check, docs/testing-properties.md): N simulated gateway processes, each with
// its own LeaseBook over one real Redis (the lease scripts run on a 3-master cluster in the store's contract tests),
// admit calls of random prices against one org's balance, a key's budget and its daily cap (a key with neither on its
// org's shared lease, issue 32), by lease or call
// by call (exact mode, with recalls), then settle or fail them; processes close their leases (their window ends),
// crash (their leases are left to the sweeper) and sweeps run. After every step, Σ charged never exceeds any cap;
// at the end, with everything returned and swept, nothing is held and exactly the rest can still be spent.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { RedisCounterStore } from '../../../core/counters/index.js';
import { createLogger } from '../../../core/logger.js';
import { LeaseBook, type Lease } from '../../../core/spend/leases.js';
import { RedisSpendStore } from '../../../core/spend/redis-spend-store.js';
import type { AdmitInput, SettleInput } from '../../../core/spend/spend-store.js';
import { REDIS_URL } from '../../helpers/env.js';
import { propertyParameters, propertyTimeout } from '../../helpers/property-runs.js';
import { testRedisPrefix } from '../../helpers/services.js';

const logger = createLogger({ level: 'silent' });
const DAY = '2026-11-22';
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const TTL = 40_000;
const RUNS = 25;

interface Caps {
  balance: number;
  budget: number | null;
  dailyCap: number | null;
}

type Step =
  | { t: 'call'; p: number; price: number }
  | { t: 'end'; ok: boolean }
  | { t: 'close'; p: number }
  | { t: 'crash'; p: number }
  | { t: 'sweep' };

const PROCESSES = 3;
const proc = fc.integer({ min: 0, max: PROCESSES - 1 });
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    arbitrary: fc.record({ t: fc.constant('call' as const), p: proc, price: fc.integer({ min: 1, max: 4 }) }),
    weight: 8,
  },
  { arbitrary: fc.record({ t: fc.constant('end' as const), ok: fc.boolean() }), weight: 5 },
  { arbitrary: fc.record({ t: fc.constant('close' as const), p: proc }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant('crash' as const), p: proc }), weight: 1 },
  { arbitrary: fc.constant({ t: 'sweep' as const }), weight: 1 },
);
const caps: fc.Arbitrary<Caps> = fc.record({
  balance: fc.integer({ min: 0, max: 400 }),
  budget: fc.option(fc.integer({ min: 0, max: 400 }), { nil: null }),
  dailyCap: fc.option(fc.integer({ min: 0, max: 400 }), { nil: null }),
});

describe('property: leases of several processes against every cap (issue 23)', () => {
  let counters: RedisCounterStore;
  let store: RedisSpendStore;
  const clock = new ManualClock(new Date(NOW));
  let run = 0;

  beforeAll(async () => {
    counters = new RedisCounterStore({ url: REDIS_URL, keyPrefix: testRedisPrefix(), logger });
    await counters.connect();
    store = new RedisSpendStore(counters.client, { clock });
  });
  afterAll(() => counters.close());

  async function check(c: Caps, steps: Step[]): Promise<void> {
    run += 1;
    clock.set(new Date(NOW));
    const orgId = `org_pl${run}_${Date.now()}`;
    const keyId = `key_pl${run}_${Date.now()}`;
    await store.hydrate({
      orgId,
      keyId,
      day: DAY,
      org: { creditCents: c.balance, balanceVersion: 1, billingMode: 'prepaid', suspended: false, creditLimitCents: 0 },
      key: { spentCents: 0, daySpentCents: 0 },
      nowMs: NOW,
    });
    const limit = Math.min(c.balance, c.budget ?? Infinity, c.dailyCap ?? Infinity);
    let books = Array.from({ length: PROCESSES }, () => newBook());
    function newBook(): LeaseBook {
      return new LeaseBook(
        { lease: (i) => store.lease(i), returnLease: (r, k, t) => store.returnLease(r, k, t) },
        logger,
        () => clock.now().getTime(),
        0, // lease from the first call (the gateway waits for a key to be busy)
      );
    }
    const base: Omit<AdmitInput, 'priceCents' | 'reservationId'> = {
      orgId,
      keyId,
      rateKey: `rk_${run}`,
      ratePerMin: 1_000_000,
      day: DAY,
      perCallMaxCents: null,
      budgetCents: c.budget,
      dailyCapCents: c.dailyCap,
      ancestors: [],
      idempotencyKey: null,
      requestHash: '',
      nowMs: NOW,
      reservationTtlMs: TTL,
      staleAfterMs: 3_600_000,
    };
    interface Open {
      id: string;
      price: number;
      p: number;
      lease?: Lease;
      book?: LeaseBook;
    }
    const open: Open[] = [];
    let charged = 0;
    let seq = 0;
    const fail = (why: string) => {
      throw new Error(`${why}; caps ${JSON.stringify(c)}, charged ${charged}`);
    };

    /** One call on process p: its lease, or a lease asked for, or call by call (the gateway's order). */
    async function admit(p: number, price: number): Promise<void> {
      const id = `use_pl_${run}_${++seq}`;
      const book = books[p]!;
      // A key without caps of its own shares its org's lease (issue 32), as the gateway's admission does.
      const shared = c.budget === null && c.dailyCap === null;
      const slot = shared
        ? LeaseBook.sharedSlotKey(orgId, DAY, undefined)
        : LeaseBook.slotKey(orgId, keyId, DAY, undefined);
      for (let attempt = 0; attempt < 3; attempt++) {
        const lease = book.take(slot, price);
        if (lease) {
          open.push({ id, price, p, lease, book });
          return;
        }
        if (book.exact(slot)) break;
        const grant = await book.acquire(
          slot,
          orgId,
          { ...base, priceCents: price, holdTtlMs: TTL },
          `lease_pl_${run}_${++seq}`,
          shared,
        );
        if (grant.outcome !== 'lease') break;
      }
      // Call by call; a recall answer is retried once the process's own leases are closed (as their window ends).
      let a = await store.admit({ ...base, priceCents: price, reservationId: id });
      if (a.outcome === 'leased') {
        for (const b of books) b.closeAll();
        await new Promise((r) => setTimeout(r, 5));
        a = await store.admit({ ...base, priceCents: price, reservationId: id, noRecall: true });
      }
      if (a.outcome === 'admitted') open.push({ id, price, p });
    }

    async function end(ok: boolean): Promise<void> {
      const call = open.shift();
      if (!call) return;
      const input: SettleInput = {
        orgId,
        keyId,
        ancestorKeyIds: [],
        day: DAY,
        priceCents: call.price,
        reservationId: call.id,
        idempotencyKey: null,
        event: JSON.stringify({ usageId: call.id }),
        record: null,
        idempotencyTtlMs: 60_000,
        nowMs: clock.now().getTime(),
        ...(call.lease ? { leaseId: call.lease.ref.leaseId } : {}),
        ...(call.lease?.ref.shared ? { sharedLease: true } : {}),
      };
      if (ok) {
        const settled = await store.settle(input);
        if (settled.outcome === 'settled') charged += call.price;
        if (call.lease) call.book!.ended(call.lease, call.price, settled.outcome === 'settled');
      } else {
        if (!call.lease) await store.void(input);
        if (call.lease) call.book!.ended(call.lease, call.price, false);
      }
    }

    for (const s of steps) {
      if (s.t === 'call') await admit(s.p, s.price);
      else if (s.t === 'end') await end(s.ok);
      else if (s.t === 'close') books[s.p]!.closeAll();
      else if (s.t === 'crash') {
        // The process dies: its calls in flight never end, its leases are never returned.
        for (let i = open.length - 1; i >= 0; i--) if (open[i]!.p === s.p) open.splice(i, 1);
        books = books.map((b, i) => (i === s.p ? newBook() : b));
      } else {
        clock.advance(TTL + 1);
        for (const r of await store.expired(clock.now().getTime(), 10_000)) {
          if (r.orgId === orgId) await store.void(r);
        }
        // Calls whose reservation or lease the sweep released can no longer charge (a late settle is `gone`).
      }
      if (charged > limit) fail(`charged past a cap after ${s.t}`);
      await new Promise((r) => setImmediate(r)); // lease returns are sent without waiting
    }
    // The end: every call ends (successfully), every lease closes, a sweep; then exactly the rest is spendable.
    while (open.length > 0) await end(true);
    for (const b of books) b.closeAll();
    await new Promise((r) => setTimeout(r, 20));
    clock.advance(TTL + 1);
    for (const r of await store.expired(clock.now().getTime(), 10_000)) if (r.orgId === orgId) await store.void(r);
    if (charged > limit) fail('charged past a cap');
    const rest = limit - charged;
    if (rest > 0) {
      const a = await store.admit({ ...base, priceCents: rest, reservationId: `use_rest_${run}`, noRecall: true });
      if (a.outcome !== 'admitted')
        fail(`the remaining ${rest} cents are not spendable (${a.outcome}): something is still held`);
    }
    const over = await store.admit({ ...base, priceCents: 1, reservationId: `use_over_${run}`, noRecall: true });
    if (over.outcome === 'admitted') fail('more than the caps allow is spendable');
  }

  it(
    'Σ charged ≤ every cap after every step; at the end nothing is held and exactly the rest is spendable',
    async () => {
      await fc.assert(
        fc.asyncProperty(caps, fc.array(step, { minLength: 1, maxLength: 60, size: 'max' }), check),
        propertyParameters(RUNS),
      );
    },
    propertyTimeout(RUNS, 60_000),
  );
});
