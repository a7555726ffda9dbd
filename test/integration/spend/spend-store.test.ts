// One contract, two spend stores: the Redis scripts (production, every gateway process; on one server and on a real
// three-master Redis Cluster, where a script touching two slots would fail with CROSSSLOT) and the in-process twin
// (the embedded all-in-one) admit, refuse, reserve, settle, void and replay the same way.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import type { RedisCounterStore } from '../../../core/counters/index.js';
import { MemorySpendStore } from '../../../core/spend/memory-spend-store.js';
import { seenKeyHash } from '../../../core/spend/idempotency-seen.js';
import { RedisSpendStore, spendBucket } from '../../../core/spend/redis-spend-store.js';
import type {
  AdmitInput,
  SettleInput,
  SettleOutcome,
  SpendStore,
  StreamedUsage,
  UsageAck,
} from '../../../core/spend/spend-store.js';
import { connectRedisSpendStore, redisStoreRow } from '../../helpers/spend-stores.js';
import { startRedisCluster, type RedisClusterHarness } from '../../helpers/redis-cluster.js';

let counters: RedisCounterStore | undefined;
let cluster: RedisClusterHarness | undefined;

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
/**
 * The Redis stores read deadlines from Redis's clock (TIME); this test clock shifts their view to the tests' virtual
 * time (its lead over the wall clock), as the in-process twin reads the `nowMs` it is given.
 */
const clock = new ManualClock(NOW);
/** Move the virtual time (every store's view of it) to `at`, and return it. */
const at = (ms: number) => (clock.set(ms), ms);

const factories: [string, () => Promise<SpendStore>][] = [
  redisStoreRow(clock, (c) => (counters = c)),
  [
    'redis cluster',
    async () => {
      cluster = await startRedisCluster();
      let store: SpendStore;
      ({ counters, store } = await connectRedisSpendStore(clock, cluster.nodes));
      return store;
    },
  ],
  ['memory', () => Promise.resolve(new MemorySpendStore())],
];

let n = 0;

/** An admission of a 5-cent call at NOW (no caps, no ancestors, no Idempotency-Key); `fields` override. */
const admitInput = (orgId: string, keyId: string, fields: Partial<AdmitInput>): AdmitInput => ({
  orgId,
  keyId,
  rateKey: `prefix_${keyId}`,
  ratePerMin: 1_000,
  day: '2026-11-22',
  priceCents: 5,
  perCallMaxCents: null,
  budgetCents: null,
  dailyCapCents: null,
  ancestors: [],
  idempotencyKey: null,
  requestHash: 'h'.repeat(32),
  reservationId: 'r',
  nowMs: NOW,
  reservationTtlMs: 40_000,
  staleAfterMs: 5_000,
  ...fields,
});

/** What settle, void and ack name a call by. */
type CallRef = Omit<SettleInput, 'reservationId' | 'event' | 'record' | 'idempotencyTtlMs' | 'nowMs'>;

describe.each(factories)('SpendStore contract: %s', (name, make) => {
  let store: SpendStore;
  beforeAll(async () => {
    store = await make();
  }, 60_000);
  afterEach(() => clock.set(NOW));
  afterAll(async () => {
    await counters?.close();
    counters = undefined;
    await cluster?.stop();
    cluster = undefined;
  });

  /** A fresh org and key with `credit` cents (prepaid unless said), hydrated as the gateway would. */
  async function account(
    credit: number,
    opts: { mode?: 'prepaid' | 'card'; suspended?: boolean; limit?: number } = {},
  ) {
    const id = ++n;
    const orgId = `org_${id}_${Date.now()}`;
    const keyId = `key_${id}_${Date.now()}`;
    await store.hydrate({
      orgId,
      keyId,
      day: '2026-11-22',
      org: {
        creditCents: credit,
        balanceVersion: 1,
        billingMode: opts.mode ?? 'prepaid',
        suspended: !!opts.suspended,
        creditLimitCents: opts.limit ?? 10_000,
      },
      key: { spentCents: 0, daySpentCents: 0 },
      nowMs: NOW,
    });
    const base = admitInput(orgId, keyId, { rateKey: `prefix_${id}_${Date.now()}` });
    let r = 0;
    const admit = (over: Partial<AdmitInput> = {}) =>
      store.admit({ ...base, reservationId: `use_${id}_${++r}`, ...over });
    /** What settle, void and ack name a 5-cent call of this key by (no Idempotency-Key, no ancestors). */
    const ref: CallRef = { orgId, keyId, day: '2026-11-22', priceCents: 5, idempotencyKey: null, ancestorKeyIds: [] };
    return { orgId, keyId, base, admit, ref };
  }

  /** A usage event as the gateway serializes it (the store only carries it). */
  const eventOf = (ref: { reservationId: string; orgId: string }, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ usageId: ref.reservationId, orgId: ref.orgId, outcome: 'success', ...extra });

  /** Settle `ref`'s reservation `reservationId` (its event streamed, no replay record), as the gateway does. */
  const settleCall = (ref: CallRef, reservationId: string, extra: Record<string, unknown> = {}) =>
    store.settle({
      ...ref,
      reservationId,
      event: eventOf({ ...ref, reservationId }, extra),
      record: null,
      idempotencyTtlMs: 0,
      nowMs: NOW,
    });

  /** Settle a reservation, then acknowledge it with Postgres's values after the commit (as the drain does). */
  async function settleAndAck(
    ref: Omit<SettleInput, 'event' | 'record' | 'idempotencyTtlMs' | 'nowMs'> & {
      record?: SettleInput['record'];
      idempotencyTtlMs?: number;
    },
    after: Pick<UsageAck, 'org' | 'key' | 'ancestorSpentCents' | 'ancestorDaySpentCents'>,
  ): Promise<SettleOutcome> {
    const settled = await store.settle({
      record: null,
      idempotencyTtlMs: 60_000,
      ...ref,
      event: eventOf(ref),
      nowMs: NOW,
    });
    if (settled.outcome === 'settled') {
      await store.ackUsage([{ ...ref, entry: settled.entry, pendingCents: ref.priceCents, ...after }]);
    }
    return settled;
  }

  it('asks for hydration when it knows nothing of the org or key', async () => {
    expect(
      await store.admit(
        admitInput('org_unknown', 'key_unknown', {
          rateKey: 'p_unknown',
          ratePerMin: 10,
          priceCents: 1,
          reservationId: 'use_x',
          reservationTtlMs: 1_000,
        }),
      ),
    ).toMatchObject({ outcome: 'hydrate' });
  });

  it('reserves prepaid credit exactly: 10 cents admit two 5-cent calls and refuse the third', async () => {
    const a = await account(10);
    expect((await a.admit()).outcome).toBe('admitted');
    expect((await a.admit()).outcome).toBe('admitted');
    expect(await a.admit()).toEqual({ outcome: 'funds', availableCents: 0, spentCents: 10 });
    // A card-billed org is not limited by its balance; free calls need no credit.
    const card = await account(0, { mode: 'card' });
    expect((await card.admit()).outcome).toBe('admitted');
    const broke = await account(0);
    expect((await broke.admit({ priceCents: 0 })).outcome).toBe('admitted');
  });

  it('is idempotent per reservation: the same admission run twice (a resend after a reconnect) reserves once', async () => {
    const a = await account(10);
    expect((await a.admit({ reservationId: 'use_twice' })).outcome).toBe('admitted');
    expect((await a.admit({ reservationId: 'use_twice' })).outcome).toBe('admitted');
    // Only 5 of the 10 cents are held: one more call fits, then none.
    expect((await a.admit()).outcome).toBe('admitted');
    expect(await a.admit()).toEqual({ outcome: 'funds', availableCents: 0, spentCents: 10 });
    // With an idempotency key the re-run finds its own claim, not somebody else's call in flight.
    const b = await account(100);
    const key = `${b.orgId}:${b.keyId}:twice`;
    expect((await b.admit({ idempotencyKey: key, reservationId: 'use_twice_i' })).outcome).toBe('admitted');
    expect((await b.admit({ idempotencyKey: key, reservationId: 'use_twice_i' })).outcome).toBe('admitted');
    expect(await b.admit({ idempotencyKey: key })).toEqual({ outcome: 'in_flight' });
    const free = await account(0);
    const freeKey = `${free.orgId}:${free.keyId}:free`;
    expect((await free.admit({ idempotencyKey: freeKey, priceCents: 0, reservationId: 'use_f' })).outcome).toBe(
      'admitted',
    );
    expect((await free.admit({ idempotencyKey: freeKey, priceCents: 0, reservationId: 'use_f' })).outcome).toBe(
      'admitted',
    );
  });

  it("counts a child key's spend against each ancestor's budget, and releases all holds together", async () => {
    const a = await account(1_000);
    const parent = `${a.keyId}_parent`;
    const root = `${a.keyId}_root`;
    await store.hydrate({
      orgId: a.orgId,
      keyId: a.keyId,
      day: '2026-11-22',
      org: { creditCents: 1_000, balanceVersion: 1, billingMode: 'prepaid', suspended: false, creditLimitCents: 0 },
      key: { spentCents: 0, daySpentCents: 0 },
      ancestors: [
        { keyId: parent, spentCents: 3, daySpentCents: 0 },
        { keyId: root, spentCents: 0, daySpentCents: 0 },
      ],
      nowMs: NOW,
    });
    const ancestors = [
      { keyId: parent, budgetCents: 12 },
      { keyId: root, budgetCents: null },
    ];
    // Unknown ancestors are rebuilt first.
    expect(await a.admit({ ancestors: [{ keyId: `${a.keyId}_unknown`, budgetCents: null }] })).toMatchObject({
      outcome: 'hydrate',
    });
    expect((await a.admit({ ancestors, reservationId: 'use_anc1' })).outcome).toBe('admitted');
    // 3 spent + 5 held + 5 > 12: the parent's budget stops the child, naming the parent.
    expect(await a.admit({ ancestors })).toEqual({ outcome: 'budget', ancestorKeyId: parent, spentCents: 8 });
    const ref = {
      orgId: a.orgId,
      keyId: a.keyId,
      ancestorKeyIds: [parent, root],
      day: '2026-11-22',
      priceCents: 5,
      idempotencyKey: null,
    };
    expect(await store.void({ ...ref, reservationId: 'use_anc1' })).toBe(true);
    expect((await a.admit({ ancestors, reservationId: 'use_anc2' })).outcome).toBe('admitted');
    await settleAndAck(
      { ...ref, reservationId: 'use_anc2' },
      {
        org: { creditCents: 995, balanceVersion: 2 },
        key: { spentCents: 5, daySpentCents: 5 },
        ancestorSpentCents: [8, 5],
      },
    );
    // The parent has 8 of 12 spent: a 5-cent call no longer fits, a 4-cent one does.
    expect(await a.admit({ ancestors })).toEqual({ outcome: 'budget', ancestorKeyId: parent, spentCents: 8 });
    expect((await a.admit({ ancestors, priceCents: 4 })).outcome).toBe('admitted');
  });

  it("counts a child key's spend against each ancestor's daily cap (the UTC day's), held and settled alike", async () => {
    const a = await account(1_000);
    const parent = `${a.keyId}_dparent`;
    const sibling = `${a.keyId}_dsibling`;
    const day = '2026-11-22';
    const org = { creditCents: 1_000, balanceVersion: 1, billingMode: 'prepaid' as const, suspended: false };
    // The parent spent 4 today (its own calls and its children's, as Postgres books them).
    await store.hydrate({
      orgId: a.orgId,
      keyId: a.keyId,
      day,
      org: { ...org, creditLimitCents: 0 },
      key: { spentCents: 0, daySpentCents: 0 },
      ancestors: [{ keyId: parent, spentCents: 4, daySpentCents: 4 }],
      nowMs: NOW,
    });
    const ancestors = [{ keyId: parent, budgetCents: null, dailyCapCents: 12 }];
    // The child's own cap (10) is not what binds: 4 + 5 held + 5 > 12, the parent's is, and it is named.
    expect((await a.admit({ ancestors, dailyCapCents: 10, reservationId: 'use_day1' })).outcome).toBe('admitted');
    expect(await a.admit({ ancestors, dailyCapCents: 10 })).toEqual({
      outcome: 'daily_cap',
      ancestorKeyId: parent,
      spentCents: 9,
    });
    // A sibling (another child of the same parent) is held to the same day total.
    await store.hydrate({
      orgId: a.orgId,
      keyId: sibling,
      day,
      org: { ...org, creditLimitCents: 0 },
      key: { spentCents: 0, daySpentCents: 0 },
      ancestors: [{ keyId: parent, spentCents: 4, daySpentCents: 4 }],
      nowMs: NOW,
    });
    expect(await a.admit({ keyId: sibling, ancestors, priceCents: 4 })).toEqual({
      outcome: 'daily_cap',
      ancestorKeyId: parent,
      spentCents: 9,
    });
    expect((await a.admit({ keyId: sibling, ancestors, priceCents: 3, reservationId: 'use_day2' })).outcome).toBe(
      'admitted',
    );
    // Settled and acknowledged with Postgres's day totals (the parent's counts both children): the day stays full.
    const ref = { orgId: a.orgId, keyId: a.keyId, ancestorKeyIds: [parent], day, priceCents: 5, idempotencyKey: null };
    await settleAndAck(
      { ...ref, reservationId: 'use_day1' },
      {
        org: { creditCents: 995, balanceVersion: 2 },
        key: { spentCents: 5, daySpentCents: 5 },
        ancestorSpentCents: [9],
        ancestorDaySpentCents: [9],
      },
    );
    expect(await a.admit({ ancestors, priceCents: 1 })).toEqual({
      outcome: 'daily_cap',
      ancestorKeyId: parent,
      spentCents: 12,
    });
    // Voiding the sibling's hold frees its 3 cents for the child.
    expect(await store.void({ ...ref, keyId: sibling, priceCents: 3, reservationId: 'use_day2' })).toBe(true);
    expect((await a.admit({ ancestors, priceCents: 3 })).outcome).toBe('admitted');
    // Another day starts from nothing (once rebuilt), whatever the parent spent today.
    const tomorrow = { day: '2026-11-23', ancestors, priceCents: 10 };
    expect(await a.admit(tomorrow)).toMatchObject({ outcome: 'hydrate' });
    await store.hydrate({
      orgId: a.orgId,
      keyId: a.keyId,
      day: '2026-11-23',
      org: { ...org, creditLimitCents: 0 },
      key: { spentCents: 5, daySpentCents: 0 },
      ancestors: [{ keyId: parent, spentCents: 9, daySpentCents: 0 }],
      nowMs: NOW,
    });
    expect((await a.admit(tomorrow)).outcome).toBe('admitted');
  });

  it("bounds a card-billed org's unpaid usage by its credit limit", async () => {
    const card = await account(0, { mode: 'card', limit: 12 });
    expect((await card.admit()).outcome).toBe('admitted');
    expect((await card.admit()).outcome).toBe('admitted');
    expect(await card.admit()).toEqual({ outcome: 'credit_limit', availableCents: 2, spentCents: 10 });
    expect((await card.admit({ priceCents: 2 })).outcome).toBe('admitted');
    // Owing already (a negative balance) counts against the limit; credit on the card org widens it.
    const owing = await account(-8, { mode: 'card', limit: 10 });
    expect(await owing.admit()).toEqual({ outcome: 'credit_limit', availableCents: 2, spentCents: 0 });
    const credited = await account(5, { mode: 'card', limit: 10 });
    for (let i = 0; i < 3; i++) expect((await credited.admit()).outcome).toBe('admitted');
    expect(await credited.admit()).toEqual({ outcome: 'credit_limit', availableCents: 0, spentCents: 15 });
  });

  it('applies per-call max, budget and the daily cap, in that order, and refuses a suspended org', async () => {
    const a = await account(1_000);
    expect(await a.admit({ perCallMaxCents: 4 })).toEqual({ outcome: 'per_call', spentCents: 0 });
    expect((await a.admit({ budgetCents: 7 })).outcome).toBe('admitted');
    expect(await a.admit({ budgetCents: 7 })).toEqual({ outcome: 'budget', spentCents: 5 });
    const b = await account(1_000);
    expect((await b.admit({ dailyCapCents: 5 })).outcome).toBe('admitted');
    expect(await b.admit({ dailyCapCents: 5 })).toEqual({ outcome: 'daily_cap', spentCents: 5 });
    expect((await b.admit({ dailyCapCents: 5, day: '2026-11-23' })).outcome).toBe('hydrate'); // a new day is rebuilt
    const s = await account(1_000, { suspended: true });
    expect(await s.admit()).toEqual({ outcome: 'suspended' });
  });

  it('rate-limits per key prefix within a minute window, with the time to the next window', async () => {
    const a = await account(1_000);
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await a.admit({ ratePerMin: 3, priceCents: 0 }));
    expect(outcomes.slice(0, 3).every((o) => o.outcome === 'admitted')).toBe(true);
    expect(outcomes[3]).toMatchObject({ outcome: 'rate_limited' });
    const retry = (outcomes[3] as { retryAfterMs: number }).retryAfterMs;
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60_000);
  });

  it('void releases a reservation (once); settle moves it into spend and keeps only newer balances', async () => {
    const a = await account(10);
    const { ref } = a;
    expect((await a.admit({ reservationId: 'use_v1' })).outcome).toBe('admitted');
    expect((await a.admit({ reservationId: 'use_v2' })).outcome).toBe('admitted');
    expect(await a.admit()).toEqual({ outcome: 'funds', availableCents: 0, spentCents: 10 });
    expect(await store.void({ ...ref, reservationId: 'use_v1' })).toBe(true);
    expect(await store.void({ ...ref, reservationId: 'use_v1' })).toBe(false);
    await settleAndAck(
      { ...ref, reservationId: 'use_v2' },
      {
        org: { creditCents: 5, balanceVersion: 2 },
        key: { spentCents: 5, daySpentCents: 5 },
        ancestorSpentCents: null,
      },
    );
    // 5 left: one more call fits, then none.
    expect((await a.admit()).outcome).toBe('admitted');
    expect(await a.admit()).toEqual({ outcome: 'funds', availableCents: 0, spentCents: 10 });
    // An older balance (version 1, 10 cents) arriving late changes nothing.
    await store.hydrate({
      orgId: a.orgId,
      org: { creditCents: 10, balanceVersion: 1, billingMode: 'prepaid', suspended: false, creditLimitCents: 0 },
      nowMs: NOW,
    });
    expect(await a.admit()).toEqual({ outcome: 'funds', availableCents: 0, spentCents: 10 });
  });

  it('a settled call is pending spend until Postgres has it: the ack releases it once, with Postgres values', async () => {
    const a = await account(10);
    const { ref } = a;
    expect((await a.admit({ reservationId: 'use_m1' })).outcome).toBe('admitted');
    const settled = await settleCall(ref, 'use_m1');
    expect(settled).toMatchObject({ outcome: 'settled', creditAppliedCents: 5, billableCents: 0 });
    expect(await store.pendingUsage(a.orgId)).toBe(1);
    // Pending: 5 of 10 still unavailable before Postgres has the call.
    expect((await a.admit({ reservationId: 'use_m2' })).outcome).toBe('admitted');
    expect(await a.admit()).toEqual({ outcome: 'funds', availableCents: 0, spentCents: 10 });
    const entry = (settled as Extract<SettleOutcome, { outcome: 'settled' }>).entry;
    const ack: UsageAck = {
      ...ref,
      entry,
      pendingCents: 5,
      org: { creditCents: 5, balanceVersion: 2 },
      key: { spentCents: 5, daySpentCents: 5 },
      ancestorSpentCents: null,
    };
    await store.ackUsage([ack]);
    await store.ackUsage([ack]); // a second ack of the same entry releases nothing more
    expect(await store.pendingUsage(a.orgId)).toBe(0);
    expect(await a.admit()).toEqual({ outcome: 'funds', availableCents: 0, spentCents: 10 });
    expect(await store.void({ ...ref, reservationId: 'use_m2' })).toBe(true);
    expect((await a.admit()).outcome).toBe('admitted');
    expect(await a.admit({ priceCents: 0 })).toMatchObject({ outcome: 'admitted' });
  });

  it('settle and void end a reservation once: a voided one cannot settle, a settled one cannot be voided', async () => {
    const a = await account(10);
    const { ref } = a;
    expect((await a.admit({ reservationId: 'use_g1' })).outcome).toBe('admitted');
    expect(await store.void({ ...ref, reservationId: 'use_g1' })).toBe(true);
    const late = { ...ref, reservationId: 'use_g1', event: '{}', record: null, idempotencyTtlMs: 0, nowMs: NOW };
    expect(await store.settle(late)).toEqual({ outcome: 'gone' });
    expect(await store.pendingUsage(a.orgId)).toBe(0);
    expect((await a.admit({ reservationId: 'use_g2' })).outcome).toBe('admitted');
    expect((await store.settle({ ...late, reservationId: 'use_g2' })).outcome).toBe('settled');
    expect(await store.void({ ...ref, reservationId: 'use_g2' })).toBe(false);
    // A failed call's event goes to the stream with the void.
    expect((await a.admit({ reservationId: 'use_g3' })).outcome).toBe('admitted');
    expect(await store.fail({ ...ref, reservationId: 'use_g3' }, eventOf({ ...ref, reservationId: 'use_g3' }))).toEqual(
      {
        stream: expect.any(String),
        id: expect.any(String),
      },
    );
    expect(await store.void({ ...ref, reservationId: 'use_g3' })).toBe(false);
    expect(await store.pendingUsage(a.orgId)).toBe(2);
  });

  it("decides the charge's split when the call settles, and writes the replay record around it", async () => {
    const card = await account(3, { mode: 'card', limit: 100 });
    const key = `${card.orgId}:${card.keyId}:split`;
    expect((await card.admit({ reservationId: 'use_s1', idempotencyKey: key })).outcome).toBe('admitted');
    const settled = await store.settle({
      ...card.ref,
      reservationId: 'use_s1',
      idempotencyKey: key,
      event: '{}',
      record: { head: 'd|' + 'h'.repeat(32) + '|{"c":', middle: ',"b":', tail: '}' },
      idempotencyTtlMs: Date.now() - NOW + 60_000,
      nowMs: NOW,
    });
    expect(settled).toMatchObject({ outcome: 'settled', creditAppliedCents: 3, billableCents: 2 });
    expect(await store.idempotencyRecord(key)).toBe('d|' + 'h'.repeat(32) + '|{"c":3,"b":2}');
    expect(await card.admit({ idempotencyKey: key })).toMatchObject({ outcome: 'replay' });
  });

  it('usage a drainer took and never acknowledged is claimed by another after it idles', async () => {
    const a = await account(100);
    const { ref } = a;
    expect((await a.admit({ reservationId: 'use_c1' })).outcome).toBe('admitted');
    const settled = await settleCall(ref, 'use_c1', { priceCents: 5 });
    expect(settled.outcome).toBe('settled');
    await new Promise((r) => setTimeout(r, 30));
    const mentions = (c: StreamedUsage) => c.calls.some((x) => x.event.includes('use_c1'));
    const claimed = (await store.claimUsage(20, 10_000)).filter(mentions);
    expect(claimed).toHaveLength(1);
    expect(claimed[0]!.calls).toHaveLength(1);
    expect(JSON.parse(claimed[0]!.calls[0]!.event)).toMatchObject({ usageId: 'use_c1', priceCents: 5 });
    expect(claimed[0]!.calls[0]).toMatchObject({ creditAppliedCents: 5, billableCents: 0 });
    // Just claimed: not idle any more.
    expect((await store.claimUsage(10_000, 10_000)).filter(mentions)).toEqual([]);
    await store.ackUsage([
      { ...ref, entry: claimed[0]!.entry, pendingCents: 5, org: null, key: null, ancestorSpentCents: null },
    ]);
    expect(await store.pendingUsage(a.orgId)).toBe(0);
    await new Promise((r) => setTimeout(r, 30));
    expect((await store.claimUsage(20, 10_000)).filter(mentions)).toEqual([]);
  });

  it("settles reservations of several orgs in one step, and the sweeper finds every org's expired ones", async () => {
    // Enough orgs that, on a cluster, they sit in different slots and on different nodes.
    const accounts = await Promise.all(Array.from({ length: 12 }, () => account(5)));
    for (const a of accounts) {
      const admitted = await a.admit({
        reservationId: `use_many_${a.orgId}`,
        reservationTtlMs: 1_000,
        idempotencyKey: `${a.orgId}:${a.keyId}:many`,
      });
      expect(admitted.outcome).toBe('admitted');
      expect(await a.admit()).toEqual({ outcome: 'funds', availableCents: 0, spentCents: 5 });
    }
    const expired = await store.expired(at(NOW + 2_000), 10_000);
    const mine = (r: { reservationId: string }) => r.reservationId.startsWith('use_many_');
    expect(
      expired
        .filter(mine)
        .map((r) => r.orgId)
        .sort(),
    ).toEqual(accounts.map((a) => a.orgId).sort());
    const record = { head: `d|${'h'.repeat(32)}|{"cost_cents":5,"c":`, middle: ',"b":', tail: '}' };
    const settled = await Promise.all(
      accounts.map((a) =>
        store.settle({
          ...a.ref,
          reservationId: `use_many_${a.orgId}`,
          idempotencyKey: `${a.orgId}:${a.keyId}:many`,
          event: eventOf({ reservationId: `use_many_${a.orgId}`, orgId: a.orgId }),
          record,
          // Long enough for the in-process store, which reads a record's expiry by the wall clock.
          idempotencyTtlMs: Date.now() - NOW + 60_000,
          nowMs: NOW,
        }),
      ),
    );
    // Postgres has them all: one ack call for every org (one script per bucket on Redis).
    await store.ackUsage(
      accounts.map((a, i) => ({
        orgId: a.orgId,
        keyId: a.keyId,
        ancestorKeyIds: [],
        day: '2026-11-22',
        entry: (settled[i] as Extract<SettleOutcome, { outcome: 'settled' }>).entry,
        pendingCents: 5,
        org: { creditCents: 0, balanceVersion: 2 },
        key: { spentCents: 5, daySpentCents: 5 },
        ancestorSpentCents: null,
      })),
    );
    expect((await store.expired(at(NOW + 2_000), 10_000)).filter(mine)).toEqual([]);
    for (const a of accounts) {
      expect(await a.admit()).toEqual({ outcome: 'funds', availableCents: 0, spentCents: 5 });
      expect(await a.admit({ idempotencyKey: `${a.orgId}:${a.keyId}:many` })).toMatchObject({ outcome: 'replay' });
      expect(await store.idempotencyRecord(`${a.orgId}:${a.keyId}:many`)).toBe(
        `d|${'h'.repeat(32)}|{"cost_cents":5,"c":5,"b":0}`,
      );
      expect(await store.pendingUsage(a.orgId)).toBe(0);
    }
  });

  it('the periodic scans visit the buckets in use each cycle, and every bucket within the backstop', async () => {
    if (!(store instanceof RedisSpendStore)) return; // buckets are the Redis layout's
    const a = await account(100);
    expect((await a.admit({ reservationId: 'use_scan_1', reservationTtlMs: 1_000 })).outcome).toBe('admitted');
    const settled = await store.settle({
      orgId: a.orgId,
      keyId: a.keyId,
      ancestorKeyIds: [],
      day: '2026-11-22',
      priceCents: 0,
      reservationId: 'use_scan_0',
      idempotencyKey: null,
      event: eventOf({ reservationId: 'use_scan_0', orgId: a.orgId }),
      record: null,
      idempotencyTtlMs: 0,
      nowMs: NOW,
    });
    expect(settled.outcome).toBe('settled');
    // Another process (its own store on the same Redis) sweeps and claims a part at a time.
    // Its client counts the scripts it runs: a tick reads the buckets in use whose turn it is and a small slice of
    // all, never all 1,024 over a cycle.
    const runs = { spExpired: 0, spClaim: 0 };
    const counting = new Proxy(counters!.client, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if ((prop === 'spExpired' || prop === 'spClaim') && typeof value === 'function') {
          return (...args: unknown[]) => {
            runs[prop] += 1;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return value;
      },
    });
    const other = new RedisSpendStore(counting, { clock });
    const part = { of: 16 };
    const mine = (r: { reservationId: string }) => r.reservationId === 'use_scan_1';
    const mentions = (c: StreamedUsage) => c.calls.some((x) => x.event.includes('use_scan_0'));
    at(NOW + 2_000);
    await new Promise((r) => setTimeout(r, 30));
    /** Ticks of `scan` until `found` says yes (or `max` ticks). */
    const ticksUntil = async (scan: () => Promise<boolean>, max: number) => {
      for (let t = 1; t <= max; t++) if (await scan()) return t;
      return Infinity;
    };
    // The bucket is in use: one cycle (16 ticks) finds the reservation and the unacknowledged entry.
    expect(await ticksUntil(async () => (await other.expired(NOW, 100, part)).some(mine), 16)).toBeLessThanOrEqual(16);
    expect(
      await ticksUntil(async () => (await other.claimUsage(20, 100, part)).some(mentions), 16),
    ).toBeLessThanOrEqual(16);
    const before = { ...runs };
    for (let t = 0; t < 16; t++) {
      await other.expired(NOW, 100, part);
      await other.claimUsage(20, 100, part);
    }
    // A full cycle: the buckets in use (this test file's few) and 1,024 / 30 of the rest, not 1,024 each.
    expect(runs.spExpired - before.spExpired).toBeLessThan(150);
    expect(runs.spClaim - before.spClaim).toBeLessThan(150);
    // The list lost with the fast state (a flush): the backstop still visits every bucket within 30 cycles.
    await counters!.client.del('sp:buckets');
    const lost = new RedisSpendStore(counters!.client, { clock });
    expect(await ticksUntil(async () => (await lost.expired(NOW, 100, part)).some(mine), 30 * 16)).toBeLessThanOrEqual(
      30 * 16,
    );
    // And a process that writes to the bucket lists it again within one claim cycle.
    for (let t = 0; t < 16; t++) await store.claimUsage(60_000, 1, part);
    expect(await counters!.client.sismember('sp:buckets', String(spendBucket(a.orgId)))).toBe(1);
  });

  describe('leases (issue 23)', () => {
    // The in-process store has no leases: it admits every call on its own, with no round trip to save.
    const leaseIt = it.skipIf(name === 'memory');
    /** A lease request for the account, asking for `want` cents and calls of `price`. */
    const leaseOf = (a: Awaited<ReturnType<typeof account>>, leaseId: string, want: number, price = 1) => ({
      orgId: a.orgId,
      keyId: a.keyId,
      rateKey: a.base.rateKey,
      ratePerMin: 1_000,
      day: '2026-11-22',
      priceCents: price,
      perCallMaxCents: null,
      budgetCents: null,
      dailyCapCents: null,
      ancestors: [],
      leaseId,
      nowMs: NOW,
      holdTtlMs: 41_000,
      staleAfterMs: 5_000,
      wantCents: want,
      wantTokens: want / price,
      minCalls: 32,
    });
    const refOf = (a: Awaited<ReturnType<typeof account>>, leaseId: string, rateWindow: string) => ({
      leaseId,
      orgId: a.orgId,
      keyId: a.keyId,
      day: '2026-11-22',
      ancestorKeyIds: [],
      rateWindow,
    });
    const settleOn = (
      a: Awaited<ReturnType<typeof account>>,
      leaseId: string,
      reservationId: string,
      price = 1,
      sharedLease = false,
    ) =>
      store.settle({
        ...(sharedLease ? { sharedLease } : {}),
        orgId: a.orgId,
        keyId: a.keyId,
        ancestorKeyIds: [],
        day: '2026-11-22',
        priceCents: price,
        reservationId,
        idempotencyKey: null,
        leaseId,
        event: eventOf({ reservationId, orgId: a.orgId }),
        record: null,
        idempotencyTtlMs: 60_000,
        nowMs: NOW,
      });

    leaseIt('holds at most half the slack, settles calls against it and returns the rest exactly', async () => {
      const a = await account(100);
      const grant = await store.lease!(leaseOf(a, 'lease_h1', 80));
      expect(grant).toMatchObject({ outcome: 'lease', cents: 50, tokens: 80 });
      const rateWindow = (grant as { rateWindow: string }).rateWindow;
      // Held: a call-by-call admission sees 50 cents left, and is told to wait for the lease (recall) when short.
      expect((await a.admit({ priceCents: 50 })).outcome).toBe('admitted');
      expect((await a.admit({ priceCents: 1 })).outcome).toBe('leased');
      expect((await a.admit({ priceCents: 1, noRecall: true })).outcome).toBe('funds');
      for (const id of ['use_l1', 'use_l2', 'use_l3'])
        expect((await settleOn(a, 'lease_h1', id)).outcome).toBe('settled');
      // Two calls still in flight keep 2 cents; the other 45 come back at once.
      await store.returnLease!(refOf(a, 'lease_h1', rateWindow), 2, 70);
      expect((await a.admit({ priceCents: 46, noRecall: true })).outcome).toBe('funds');
      expect((await a.admit({ priceCents: 45 })).outcome).toBe('admitted');
      expect((await settleOn(a, 'lease_h1', 'use_l4')).outcome).toBe('settled');
      await store.returnLease!(refOf(a, 'lease_h1', rateWindow), 0, 0); // the last call failed: its cent is free
      expect((await a.admit({ priceCents: 2, noRecall: true })).outcome).toBe('funds');
      expect((await a.admit({ priceCents: 1 })).outcome).toBe('admitted');
      // 50 + 4 settled + 45 + 1: nothing lost, nothing twice; a settle on the finished lease is gone.
      expect((await settleOn(a, 'lease_h1', 'use_l5')).outcome).toBe('gone');
      await store.returnLease!(refOf(a, 'lease_h1', rateWindow), 0, 0); // idempotent
      expect((await a.admit({ priceCents: 1, noRecall: true })).outcome).toBe('funds');
    });

    leaseIt('a return keeping more than the lease still has never releases more than it held', async () => {
      const a = await account(100);
      const grant = await store.lease!(leaseOf(a, 'lease_k1', 64));
      expect(grant).toMatchObject({ outcome: 'lease', cents: 50 });
      const rateWindow = (grant as { rateWindow: string }).rateWindow;
      for (const id of ['use_k1', 'use_k2', 'use_k3'])
        expect((await settleOn(a, 'lease_k1', id)).outcome).toBe('settled');
      // The process still counts those three in flight (their replies not read yet): it keeps 49, the lease has 47.
      await store.returnLease!(refOf(a, 'lease_k1', rateWindow), 49, 0);
      await store.returnLease!(refOf(a, 'lease_k1', rateWindow), 0, 0);
      expect((await a.admit({ priceCents: 98, noRecall: true })).outcome).toBe('funds');
      expect((await a.admit({ priceCents: 97, noRecall: true })).outcome).toBe('admitted');
    });

    leaseIt('answers exact under 32 calls of slack, and while the org is recalled', async () => {
      const small = await account(31);
      expect(await store.lease!(leaseOf(small, 'lease_x1', 31))).toEqual({ outcome: 'exact' });
      const a = await account(1_000);
      expect((await store.lease!(leaseOf(a, 'lease_x2', 100))).outcome).toBe('lease');
      expect((await a.admit({ priceCents: 951 })).outcome).toBe('leased'); // recalls the lease
      expect(await store.lease!(leaseOf(a, 'lease_x3', 100))).toEqual({ outcome: 'exact' });
    });

    leaseIt(
      'a lease its process abandoned is swept after its hold: the remainder is spendable, a late settle is gone',
      async () => {
        const a = await account(100);
        expect((await store.lease!({ ...leaseOf(a, 'lease_s1', 64), holdTtlMs: 1_000 })).outcome).toBe('lease');
        expect((await settleOn(a, 'lease_s1', 'use_s1', 5)).outcome).toBe('settled');
        const expired = (await store.expired(at(NOW + 2_000), 10_000)).filter((r) => r.reservationId === 'lease_s1');
        expect(expired).toHaveLength(1);
        expect(await store.void(expired[0]!)).toBe(true);
        expect((await settleOn(a, 'lease_s1', 'use_s2', 5)).outcome).toBe('gone');
        // 5 settled (pending until Postgres has it); the other 95 free again.
        expect((await a.admit({ priceCents: 95, noRecall: true })).outcome).toBe('admitted');
        expect((await a.admit({ priceCents: 1, noRecall: true })).outcome).toBe('funds');
      },
    );

    leaseIt(
      "the org's shared lease (issue 32) holds the org only; its calls add to their key's pending spend, which caps see",
      async () => {
        const a = await account(100);
        const shared = { ...leaseOf(a, 'lease_o1', 40), keyId: '', kind: 'shared' as const };
        const grant = await store.lease!(shared);
        // 40 of the 50 it could hold, and no rate tokens (the key's come from a `tokens` lease).
        expect(grant).toMatchObject({ outcome: 'lease', cents: 40, tokens: 0 });
        // Nothing held on the key: a call of it with a 10-cent budget is admitted beside the lease (its own 5 held).
        expect((await a.admit({ priceCents: 5, budgetCents: 10, noRecall: true })).outcome).toBe('admitted');
        // Two shared-lease calls settle: the key's pending spend grows by 10, its own call's hold stays.
        for (const id of ['use_o1', 'use_o2'])
          expect((await settleOn(a, 'lease_o1', id, 5, true)).outcome).toBe('settled');
        expect((await a.admit({ priceCents: 5, budgetCents: 20, noRecall: true })).outcome).toBe('admitted');
        expect((await a.admit({ priceCents: 1, budgetCents: 20, noRecall: true })).outcome).toBe('budget');
        // Returned: the 30 unused come back to the org; 10 pending and 2 × 5 held leave 80.
        const ref = { ...refOf(a, 'lease_o1', (grant as { rateWindow: string }).rateWindow), keyId: '', shared: true };
        await store.returnLease!(ref, 0, 0);
        expect((await a.admit({ priceCents: 81, noRecall: true })).outcome).toBe('funds');
        expect((await a.admit({ priceCents: 80, noRecall: true })).outcome).toBe('admitted');
      },
    );

    leaseIt(
      'a shared lease its process abandoned is swept: the org gets its remainder back, the key keeps its spend',
      async () => {
        const a = await account(100);
        const shared = { ...leaseOf(a, 'lease_o2', 40), keyId: '', kind: 'shared' as const, holdTtlMs: 1_000 };
        expect((await store.lease!(shared)).outcome).toBe('lease');
        expect((await settleOn(a, 'lease_o2', 'use_o3', 5, true)).outcome).toBe('settled');
        const expired = (await store.expired(at(NOW + 2_000), 10_000)).filter((r) => r.reservationId === 'lease_o2');
        expect(expired).toHaveLength(1);
        expect(expired[0]!.keyId).toBe('');
        expect(await store.void(expired[0]!)).toBe(true);
        expect((await settleOn(a, 'lease_o2', 'use_o4', 5, true)).outcome).toBe('gone');
        // The key's 5 pending count against a cap; the org's other 95 are free again.
        expect((await a.admit({ priceCents: 1, budgetCents: 5, noRecall: true })).outcome).toBe('budget');
        expect((await a.admit({ priceCents: 95, noRecall: true })).outcome).toBe('admitted');
        expect((await a.admit({ priceCents: 1, noRecall: true })).outcome).toBe('funds');
      },
    );

    leaseIt(
      "a key's rate tokens alone: hydrate first, half the window's room, exact under 32, no money held",
      async () => {
        const a = await account(100);
        const tokens = (leaseId: string, keyId = a.keyId) => ({
          ...leaseOf(a, leaseId, 0, 1),
          keyId,
          priceCents: 0,
          ratePerMin: 100,
          wantTokens: 100,
          kind: 'tokens' as const,
        });
        // A key whose spend the fast state does not hold is hydrated before its calls share the org's lease.
        expect(await store.lease!(tokens('lease_t0', `${a.keyId}_cold`))).toMatchObject({ outcome: 'hydrate' });
        expect(await store.lease!(tokens('lease_t1'))).toMatchObject({ outcome: 'lease', cents: 0, tokens: 50 });
        expect(await store.lease!(tokens('lease_t2'))).toMatchObject({ outcome: 'lease', tokens: 25 });
        expect(await store.lease!(tokens('lease_t3'))).toEqual({ outcome: 'exact' });
        // 25 calls of room left in the window; the org's money untouched.
        for (let i = 0; i < 25; i++)
          expect((await a.admit({ ratePerMin: 100, priceCents: 0 })).outcome).toBe('admitted');
        expect((await a.admit({ ratePerMin: 100, priceCents: 0 })).outcome).toBe('rate_limited');
        expect((await a.admit({ priceCents: 100, noRecall: true, rateKey: `${a.base.rateKey}_other` })).outcome).toBe(
          'admitted',
        );
      },
    );

    leaseIt('leases rate tokens and gives the unused ones back to the window', async () => {
      const a = await account(1_000);
      // At most half the window's room: 40 of 100 asked, 40 granted; then 30 more of the 60 left, not 60.
      const grant = await store.lease!({ ...leaseOf(a, 'lease_r1', 40), ratePerMin: 100 });
      expect(grant).toMatchObject({ outcome: 'lease', tokens: 40 });
      expect(await store.lease!({ ...leaseOf(a, 'lease_r2', 60), ratePerMin: 100 })).toMatchObject({ tokens: 30 });
      // 30 tokens left in the window: under 32 calls of room, a lease is refused (exact), and a 31st call too.
      expect(await store.lease!({ ...leaseOf(a, 'lease_r3', 40), ratePerMin: 100 })).toEqual({ outcome: 'exact' });
      for (let i = 0; i < 30; i++) expect((await a.admit({ ratePerMin: 100 })).outcome).toBe('admitted');
      expect((await a.admit({ ratePerMin: 100 })).outcome).toBe('rate_limited');
      await store.returnLease!(refOf(a, 'lease_r1', (grant as { rateWindow: string }).rateWindow), 0, 30);
      expect((await a.admit({ ratePerMin: 100 })).outcome).toBe('admitted');
    });
  });

  it('settles the calls of orgs in different buckets together wherever the batch key lets them (issue 32)', async () => {
    const a = await account(100);
    let b = await account(100);
    while (spendBucket(b.orgId) === spendBucket(a.orgId)) b = await account(100);
    const clustered = name === 'redis cluster';
    // One server (or the process itself): one batch for every org; a cluster: a batch per bucket (one slot a script).
    expect(store.batchKey(a.orgId) === store.batchKey(b.orgId)).toBe(!clustered);
    if (clustered) return;
    const calls = [
      { acct: a, id: `use_x_${a.orgId}_1`, price: 5 },
      { acct: b, id: `use_x_${b.orgId}_1`, price: 7 },
      { acct: a, id: `use_x_${a.orgId}_2`, price: 0 },
      { acct: b, id: `use_x_${b.orgId}_2`, price: 3 },
    ];
    for (const c of calls) {
      expect((await c.acct.admit({ reservationId: c.id, priceCents: c.price })).outcome).toBe('admitted');
    }
    const refOf = (c: (typeof calls)[number]) => ({ ...c.acct.ref, reservationId: c.id, priceCents: c.price });
    const batch = await store.settleBatch(
      calls.map((c) => ({ ...refOf(c), event: eventOf(refOf(c)), record: null, idempotencyTtlMs: 0, nowMs: NOW })),
    );
    expect(batch.entry).not.toBeNull();
    expect(batch.results.map((r) => r.outcome)).toEqual(['settled', 'settled', 'settled', 'settled']);
    expect(await store.pendingUsage(a.orgId)).toBe(2);
    expect(await store.pendingUsage(b.orgId)).toBe(2);
    // Each reservation left its own bucket's set: none is voided by the sweeper later.
    for (const c of calls) expect(await store.void(refOf(c))).toBe(false);
    // Held until Postgres has them: 100 - 5 pending for a, 100 - 10 for b.
    expect((await a.admit({ priceCents: 96 })).outcome).toBe('funds');
    expect((await b.admit({ priceCents: 91 })).outcome).toBe('funds');
    await store.ackUsage(
      calls.map((c, i) => ({
        ...refOf(c),
        entry: batch.entry!,
        pendingCents: c.price,
        org: { creditCents: c.acct === a ? 95 : 90, balanceVersion: 2 + i },
        key: null,
        ancestorSpentCents: null,
      })),
    );
    expect(await store.pendingUsage(a.orgId)).toBe(0);
    expect(await store.pendingUsage(b.orgId)).toBe(0);
    expect((await a.admit({ priceCents: 95 })).outcome).toBe('admitted');
    expect((await b.admit({ priceCents: 91 })).outcome).toBe('funds');
    expect((await b.admit({ priceCents: 90 })).outcome).toBe('admitted');
  });

  it('settles a batch in one step: call by call over a running balance, a voided call gone, one entry acked once', async () => {
    // Card billing: 7 cents of balance and a 10-cent credit limit, so the second call is partly billable.
    const a = await account(7, { mode: 'card', limit: 10 });
    const ref = (reservationId: string, priceCents = 5) => ({
      orgId: a.orgId,
      keyId: a.keyId,
      ancestorKeyIds: [],
      day: '2026-11-22',
      priceCents,
      reservationId,
      idempotencyKey: null,
    });
    for (const id of ['use_b1', 'use_b2', 'use_b3'])
      expect((await a.admit({ reservationId: id })).outcome).toBe('admitted');
    expect(await store.void(ref('use_b3'))).toBe(true); // the sweeper got there first
    const input = (r: ReturnType<typeof ref>) => ({
      ...r,
      event: eventOf(r),
      record: null,
      idempotencyTtlMs: 60_000,
      nowMs: NOW,
    });
    const batch = await store.settleBatch([
      input(ref('use_b1')),
      input(ref('use_b2')),
      input(ref('use_b3')),
      input(ref('use_b4', 0)), // a free call: nothing held, still recorded
    ]);
    expect(batch.entry).not.toBeNull();
    expect(batch.results).toEqual([
      { outcome: 'settled', creditAppliedCents: 5, billableCents: 0, entry: batch.entry },
      { outcome: 'settled', creditAppliedCents: 2, billableCents: 3, entry: batch.entry },
      { outcome: 'gone' },
      { outcome: 'settled', creditAppliedCents: 0, billableCents: 0, entry: batch.entry },
    ]);
    expect(await store.pendingUsage(a.orgId)).toBe(3);
    // Held until Postgres has them: 7 - 10 pending + 10 limit leaves 7 cents of headroom.
    expect((await a.admit({ priceCents: 8 })).outcome).toBe('credit_limit');
    const acks: UsageAck[] = ['use_b1', 'use_b2', 'use_b4'].map((id, i) => ({
      ...ref(id, i === 2 ? 0 : 5),
      entry: batch.entry!,
      pendingCents: i === 2 ? 0 : 5,
      org: { creditCents: -3, balanceVersion: 2 + i },
      key: { spentCents: 5 * Math.min(i + 1, 2), daySpentCents: 5 * Math.min(i + 1, 2) },
      ancestorSpentCents: null,
    }));
    await store.ackUsage(acks);
    await store.ackUsage(acks); // the entry is acknowledged once: a second ack releases nothing more
    expect(await store.pendingUsage(a.orgId)).toBe(0);
    // Balance -3 from Postgres, nothing pending: 7 cents of headroom again, and not 7 + 10 (released twice).
    expect((await a.admit({ priceCents: 8 })).outcome).toBe('credit_limit');
    expect((await a.admit({ priceCents: 7 })).outcome).toBe('admitted');
  });

  it('idempotency: a claim is in flight until settled, then replays; another request under the key is refused', async () => {
    const a = await account(100);
    const key = `${a.orgId}:${a.keyId}:k1`;
    expect((await a.admit({ idempotencyKey: key, reservationId: 'use_i1' })).outcome).toBe('admitted');
    expect(await a.admit({ idempotencyKey: key })).toEqual({ outcome: 'in_flight' });
    expect(await a.admit({ idempotencyKey: key, requestHash: 'x'.repeat(32) })).toEqual({ outcome: 'mismatch' });
    await settleAndAck(
      {
        ...a.ref,
        reservationId: 'use_i1',
        idempotencyKey: key,
        record: { head: `d|${'h'.repeat(32)}|{"cost_cents":5,"c":`, middle: ',"b":', tail: '}' },
        idempotencyTtlMs: Date.now() - NOW + 60_000,
      },
      {
        org: { creditCents: 95, balanceVersion: 2 },
        key: { spentCents: 5, daySpentCents: 5 },
        ancestorSpentCents: null,
      },
    );
    const record = `d|${'h'.repeat(32)}|{"cost_cents":5,"c":5,"b":0}`;
    expect(await a.admit({ idempotencyKey: key })).toEqual({ outcome: 'replay', record });
    // A failed first attempt frees the key for a retry.
    const key2 = `${a.orgId}:${a.keyId}:k2`;
    expect((await a.admit({ idempotencyKey: key2, reservationId: 'use_i2' })).outcome).toBe('admitted');
    await store.void({
      ...a.ref,
      reservationId: 'use_i2',
      idempotencyKey: key2,
    });
    expect((await a.admit({ idempotencyKey: key2 })).outcome).toBe('admitted');
  });

  it('a first-seen idempotency key is new only against a complete seen set; the settle adds its hash (issue 21)', async () => {
    const a = await account(100);
    const idem = (k: string, over: Partial<AdmitInput> = {}) =>
      a.admit({
        idempotencyKey: `${a.orgId}:${a.keyId}:${k}`,
        seenHash: seenKeyHash(a.keyId, k),
        fastPath: true,
        ...over,
      });
    // Never built (or lost with the fast state's data): not stamped, so Postgres must be asked.
    expect(await idem('k1')).toMatchObject({ outcome: 'admitted', idempotency: 'unstamped' });
    // A rebuild: the epoch (stable until lost), the booked keys, then the stamp, only under the same epoch.
    const epoch = await store.seenEpoch(a.orgId);
    expect(await store.seenEpoch(a.orgId)).toBe(epoch);
    await store.addSeen([{ orgId: a.orgId, hash: seenKeyHash(a.keyId, 'old') }]);
    expect(await idem('k2')).toMatchObject({ idempotency: 'unstamped' });
    expect(await store.completeSeen(a.orgId, `${epoch}x`)).toBe(false);
    expect(await idem('k3')).toMatchObject({ idempotency: 'unstamped' });
    expect(await store.completeSeen(a.orgId, epoch)).toBe(true);
    expect(await idem('k4')).toMatchObject({ outcome: 'admitted', idempotency: 'new' });
    expect(await idem('old')).toMatchObject({ outcome: 'admitted', idempotency: 'seen' });
    // A process whose fast path is off (direct bookings not yet synced) gets no verdict: it asks Postgres.
    expect((await idem('k5', { fastPath: false })).outcome).toBe('admitted');
    expect(await idem('k6', { fastPath: false })).not.toHaveProperty('idempotency');
    // Another org is not stamped by this one's rebuild.
    const b = await account(100);
    expect(
      await b.admit({
        idempotencyKey: `${b.orgId}:${b.keyId}:k1`,
        seenHash: seenKeyHash(b.keyId, 'k1'),
        fastPath: true,
      }),
    ).toMatchObject({ idempotency: 'unstamped' });
    // The settle that writes the replay record adds the key's hash in the same step.
    expect((await idem('paid', { reservationId: 'use_seen_paid' })).outcome).toBe('admitted');
    await settleAndAck(
      {
        ...a.ref,
        reservationId: 'use_seen_paid',
        idempotencyKey: `${a.orgId}:${a.keyId}:paid`,
        record: { head: `d|${'h'.repeat(32)}|{"c":`, middle: ',"b":', tail: '}' },
        idempotencyTtlMs: Date.now() - NOW + 60_000,
        seenHash: seenKeyHash(a.keyId, 'paid'),
      },
      { org: null, key: null, ancestorSpentCents: null },
    );
    // Its record gone (expired after 25 h): the hash still sends the admission to Postgres.
    expect(await idem('paid', { idempotencyKey: `${a.orgId}:${a.keyId}:paid-expired` })).toMatchObject({
      idempotency: 'seen',
    });
  });

  it('lists reservations past their expiry for the sweeper, and forgetting an org forces a rebuild', async () => {
    const a = await account(100);
    expect((await a.admit({ reservationId: 'use_exp', reservationTtlMs: 1_000 })).outcome).toBe('admitted');
    const expired = await store.expired(at(NOW + 2_000), 1_000);
    expect(expired).toContainEqual({
      reservationId: 'use_exp',
      ...a.ref,
      idempotencyKey: null,
    });
    expect((await store.expired(at(NOW + 500), 1_000)).map((r) => r.reservationId)).not.toContain('use_exp');
    await store.forgetOrg(a.orgId);
    expect(await a.admit()).toMatchObject({ outcome: 'hydrate' });
  });

  it('a snapshot read before a suspension cannot bring the old flags back (generations)', async () => {
    const a = await account(100);
    const org = (suspended: boolean) => ({
      creditCents: 100,
      balanceVersion: 1,
      billingMode: 'prepaid' as const,
      suspended,
      creditLimitCents: 0,
    });
    // A stale admission starts a refresh (generation g) …
    const stale = await a.admit({ nowMs: at(NOW + 60_000) });
    clock.set(NOW);
    expect(stale).toMatchObject({ outcome: 'admitted', stale: true });
    const generation = (stale as { generation?: number }).generation;
    expect(generation).toEqual(expect.any(Number));
    // … the org is suspended and forgotten while the refresh reads Postgres …
    await store.forgetOrg(a.orgId);
    const forced = await a.admit();
    expect(forced).toMatchObject({ outcome: 'hydrate' });
    // … and the refresh's old, unsuspended snapshot lands late: it must not win.
    await store.hydrate({ orgId: a.orgId, org: org(false), generation, nowMs: NOW });
    expect(await a.admit()).toMatchObject({ outcome: 'hydrate' });
    await store.hydrate({
      orgId: a.orgId,
      org: org(true),
      generation: (forced as { generation?: number }).generation,
      nowMs: NOW,
    });
    expect(await a.admit()).toEqual({ outcome: 'suspended' });
  });
  // Issue 21, item 13: gateways whose clocks disagree share one clock for deadlines (Redis TIME in the scripts). The
  // in-process twin serves one process and keeps reading the `nowMs` it is given.
  it.skipIf(name === 'memory')(
    "a gateway 10 s off neither voids another's live reservation nor misses an expired one",
    async () => {
      const client = counters!.client;
      const systemStore = new RedisSpendStore(client); // each "gateway" on the system clock, whatever its machine says
      const a = await account(100);
      const live = { ...a.base, reservationId: `use_skew_${a.orgId}`, reservationTtlMs: 5_000 };
      // Admitted by a gateway whose clock is 10 s behind: its expiry is not 5 s in the past.
      expect((await systemStore.admit({ ...live, nowMs: Date.now() - 10_000 })).outcome).toBe('admitted');
      const ids = async (nowMs: number) =>
        (await systemStore.expired(nowMs, 10_000)).map((r) => r.reservationId).filter((id) => id.includes('skew'));
      expect(await ids(Date.now())).toEqual([]);
      // A sweeper 10 s ahead does not void it either.
      expect(await ids(Date.now() + 10_000)).toEqual([]);
      // A short-lived one expires on Redis's clock: a sweeper 10 s behind still finds it.
      const short = { ...a.base, reservationId: `use_skew_short_${a.orgId}`, reservationTtlMs: 200 };
      expect((await systemStore.admit({ ...short, nowMs: Date.now() + 10_000 })).outcome).toBe('admitted');
      await new Promise((r) => setTimeout(r, 400));
      expect(await ids(Date.now() - 10_000)).toEqual([short.reservationId]);
      expect(await systemStore.void({ ...short, ancestorKeyIds: [] })).toBe(true);
      expect(await systemStore.void({ ...live, ancestorKeyIds: [] })).toBe(true);
    },
  );
});
