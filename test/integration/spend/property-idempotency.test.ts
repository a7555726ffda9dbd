// The idempotency state machine as a property (fast-check; docs/testing-properties.md), on both spend stores: the
// Redis scripts and the in-process twin must follow one model. Per scoped Idempotency-Key the model is free →
// processing (the first admission claims it) → done (settled: every later admission of the same request replays the
// record the settle wrote); a duplicate while processing is `in_flight` (the gateway waits on it), the same admission
// run again finds its own claim, another request under the key is a `mismatch` (422), and a failure, a void or the
// sweeper (after the reservation's expiry) frees the key; a settle after the sweep finds the reservation gone. Random
// scripts of those steps, with concurrent duplicates, against the model; after every step the stored record must be
// the model's. A second property drives the real gateway over HTTP: concurrent duplicates of one idempotent call
// reach the upstream once, all get the original's answer, and a failed call's key is free again.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisCounterStore } from '../../../core/counters/index.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { ManualClock } from '../../../core/clock.js';
import { MemorySpendStore } from '../../../core/spend/memory-spend-store.js';
import type { Admission, ReservationRef, SpendStore } from '../../../core/spend/spend-store.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { redisStoreRow } from '../../helpers/spend-stores.js';
import { http, serve } from '../../helpers/http.js';
import { createLiveApi, type LiveApi } from '../../helpers/listings.js';
import { propertyParameters, propertyTimeout } from '../../helpers/property-runs.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { createConsumer, closeAll } from '../../helpers/fixtures.js';
import { expectNoDrift } from '../../helpers/books.js';

const DAY = '2026-11-22';
const RESERVATION_TTL_MS = 40_000;
/** Done records outlive every run (Redis expires by its own clock, the twin by the caller's). */
const IDEMPOTENCY_TTL_MS = 10 * 3_600_000;
const HASHES = ['a'.repeat(32), 'b'.repeat(32)] as const;
const PRICE = 7;
const RUNS = 40;

type Step =
  | { t: 'admit'; key: number; hash: number }
  | { t: 'rerun'; key: number }
  | { t: 'race'; key: number; hash: number; n: number }
  | { t: 'settle'; key: number }
  | { t: 'fail'; key: number }
  | { t: 'void'; key: number }
  | { t: 'sweep' }
  | { t: 'late'; key: number };

const key = fc.integer({ min: 0, max: 2 });
const hash = fc.constantFrom(0, 0, 1);
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ t: fc.constant('admit' as const), key, hash }), weight: 6 },
  { arbitrary: fc.record({ t: fc.constant('rerun' as const), key }), weight: 1 },
  {
    arbitrary: fc.record({ t: fc.constant('race' as const), key, hash, n: fc.integer({ min: 2, max: 6 }) }),
    weight: 2,
  },
  { arbitrary: fc.record({ t: fc.constant('settle' as const), key }), weight: 4 },
  { arbitrary: fc.record({ t: fc.constant('fail' as const), key }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant('void' as const), key }), weight: 1 },
  { arbitrary: fc.constant({ t: 'sweep' as const }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant('late' as const), key }), weight: 1 },
);

/** One key's state in the model. */
type KeyState =
  | { s: 'free' }
  | { s: 'processing'; hash: string; reservationId: string }
  | { s: 'done'; hash: string; record: string };

let counters: RedisCounterStore | undefined;
/** The runs' virtual time: the Redis store's deadlines (Redis TIME) are shifted by its lead over the wall clock. */
const clock = new ManualClock();
const stores: [string, () => Promise<SpendStore>][] = [
  redisStoreRow(clock, (c) => (counters = c)),
  ['memory', () => Promise.resolve(new MemorySpendStore())],
];

let runId = 0;

describe.each(stores)('property: the idempotency state machine on the %s store', (_name, make) => {
  let store: SpendStore;
  beforeAll(async () => {
    store = await make();
  });
  afterAll(async () => {
    await counters?.close();
    counters = undefined;
  });

  async function run(steps: Step[]): Promise<void> {
    const id = ++runId;
    const orgId = `org_prop_${id}_${Date.now()}`;
    const keyId = `key_prop_${id}_${Date.now()}`;
    // The twin reads a record (idempotencyRecord) by the wall clock and keeps it by the caller's: start at wall time.
    let now = Date.now();
    clock.set(now);
    let reservations = 0;
    await store.hydrate({
      orgId,
      keyId,
      day: DAY,
      org: { creditCents: 1e9, balanceVersion: 1, billingMode: 'prepaid', suspended: false, creditLimitCents: 0 },
      key: { spentCents: 0, daySpentCents: 0 },
      nowMs: now,
    });
    const scoped = (k: number) => `${orgId}:${keyId}:idem-${k}`;
    const model: KeyState[] = [{ s: 'free' }, { s: 'free' }, { s: 'free' }];
    /** Reservations the sweeper voided: a settle of one of them must find it gone. */
    const swept: ReservationRef[] = [];
    const trace: string[] = [];
    const fail = (message: string): never => {
      throw new Error(`${message}\nmodel: ${JSON.stringify(model)}\nsteps:\n  ${trace.join('\n  ')}`);
    };
    const ref = (k: number, reservationId: string): ReservationRef => ({
      orgId,
      keyId,
      ancestorKeyIds: [],
      day: DAY,
      priceCents: PRICE,
      reservationId,
      idempotencyKey: scoped(k),
    });
    const admit = (k: number, h: string, reservationId = `use_${id}_${++reservations}`): Promise<Admission> =>
      store.admit({
        orgId,
        keyId,
        rateKey: `rate_${id}`,
        ratePerMin: 1_000_000,
        day: DAY,
        priceCents: PRICE,
        perCallMaxCents: null,
        budgetCents: null,
        dailyCapCents: null,
        ancestors: [],
        idempotencyKey: scoped(k),
        requestHash: h,
        reservationId,
        nowMs: now,
        reservationTtlMs: RESERVATION_TTL_MS,
        staleAfterMs: 3_600_000,
      });
    /** What the model says a new admission of request `h` under key `k` gets. */
    const expected = (k: number, h: string): Admission['outcome'] => {
      const st = model[k]!;
      if (st.s === 'free') return 'admitted';
      if (st.hash !== h) return 'mismatch';
      return st.s === 'processing' ? 'in_flight' : 'replay';
    };
    const record = (k: number, reservationId: string) =>
      `d|${(model[k] as { hash: string }).hash}|{"request_id":"${reservationId}","credit_applied_cents":${PRICE},"billable_cents":0}`;

    for (const st of steps) {
      trace.push(JSON.stringify(st));
      const state = model['key' in st ? st.key : 0]!;
      switch (st.t) {
        case 'admit': {
          const h = HASHES[st.hash]!;
          const want = expected(st.key, h);
          const reservationId = `use_${id}_${++reservations}`;
          const got = await admit(st.key, h, reservationId);
          if (got.outcome !== want) fail(`admit: ${JSON.stringify(got)}, want ${want}`);
          if (got.outcome === 'replay' && state.s === 'done' && got.record !== state.record) {
            fail(`replay record ${got.record} != ${state.record}`);
          }
          if (want === 'admitted') model[st.key] = { s: 'processing', hash: h, reservationId };
          break;
        }
        case 'rerun': {
          // The same admission sent again (a client resending after a reconnect) finds its own claim.
          if (state.s !== 'processing') continue;
          const got = await admit(st.key, state.hash, state.reservationId);
          if (got.outcome !== 'admitted') fail(`re-run of its own admission: ${JSON.stringify(got)}`);
          break;
        }
        case 'race': {
          const h = HASHES[st.hash]!;
          const want = expected(st.key, h);
          const ids = Array.from({ length: st.n }, () => `use_${id}_${++reservations}`);
          const got = await Promise.all(ids.map((r) => admit(st.key, h, r)));
          const outcomes = got.map((g) => g.outcome);
          if (want === 'admitted') {
            // Exactly one of concurrent duplicates claims the key; the others see it in flight (and wait).
            const winners = ids.filter((_, i) => outcomes[i] === 'admitted');
            if (winners.length !== 1 || outcomes.filter((o) => o === 'in_flight').length !== st.n - 1) {
              fail(`race on a free key: ${JSON.stringify(outcomes)}`);
            }
            model[st.key] = { s: 'processing', hash: h, reservationId: winners[0]! };
          } else if (outcomes.some((o) => o !== want)) fail(`race: ${JSON.stringify(outcomes)}, want all ${want}`);
          break;
        }
        case 'settle': {
          if (state.s !== 'processing') continue;
          const full = record(st.key, state.reservationId);
          const head = full.slice(0, full.indexOf(`${PRICE},"billable_cents":`));
          const settled = await store.settle({
            ...ref(st.key, state.reservationId),
            event: JSON.stringify({ usageId: state.reservationId, orgId, outcome: 'success' }),
            record: { head, middle: ',"billable_cents":', tail: '}' },
            idempotencyTtlMs: IDEMPOTENCY_TTL_MS,
            nowMs: now,
          });
          if (settled.outcome !== 'settled') fail(`settle: ${JSON.stringify(settled)}`);
          model[st.key] = { s: 'done', hash: state.hash, record: full };
          break;
        }
        case 'fail':
        case 'void': {
          if (state.s !== 'processing') continue;
          const r = ref(st.key, state.reservationId);
          if (st.t === 'fail') await store.fail(r, JSON.stringify({ usageId: r.reservationId, outcome: 'failed' }));
          else if (!(await store.void(r))) fail('void of an open reservation returned false');
          model[st.key] = { s: 'free' };
          break;
        }
        case 'sweep': {
          now += RESERVATION_TTL_MS + 1;
          clock.set(now);
          const expired = (await store.expired(now, 1_000)).filter((e) => e.orgId === orgId);
          const open = model.flatMap((m, k) => (m.s === 'processing' ? [{ k, reservationId: m.reservationId }] : []));
          const ids = expired.map((e) => e.reservationId).sort();
          if (JSON.stringify(ids) !== JSON.stringify(open.map((o) => o.reservationId).sort())) {
            fail(`expired ${JSON.stringify(ids)}, open in the model ${JSON.stringify(open)}`);
          }
          for (const e of expired) {
            if (!(await store.void(e))) fail(`sweep could not void ${e.reservationId}`);
            swept.push(e);
          }
          for (const o of open) model[o.k] = { s: 'free' };
          break;
        }
        case 'late': {
          // A call that outlived its reservation: its settle finds it gone and changes nothing.
          const r = swept.find((x) => x.idempotencyKey === scoped(st.key));
          if (!r) continue;
          const settled = await store.settle({
            ...r,
            event: '{}',
            record: { head: `d|${HASHES[0]}|late`, middle: '|', tail: '' },
            idempotencyTtlMs: IDEMPOTENCY_TTL_MS,
            nowMs: now,
          });
          if (settled.outcome !== 'gone') fail(`settle after the sweep: ${JSON.stringify(settled)}`);
          break;
        }
      }
      // The stored record is the model's, for every key.
      for (const [k, m] of model.entries()) {
        const stored = await store.idempotencyRecord(scoped(k));
        const want = m.s === 'free' ? null : m.s === 'processing' ? `p|${m.hash}|${m.reservationId}` : m.record;
        if (stored !== want) fail(`key ${k}: stored ${String(stored)}, model ${String(want)}`);
      }
    }
  }

  it(
    'admit, duplicate, race, settle, fail, void, sweep and late settles follow the model',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40, size: 'max' }), run),
        propertyParameters(RUNS * 3),
      );
    },
    propertyTimeout(RUNS * 3, 60_000),
  );
});

describe('property: idempotent calls through the gateway', () => {
  let stack: TestStack;
  let gateway: GatewayHandler;
  let server: RunningHttpServer;
  let upstream: Upstream;
  let api: LiveApi;
  let consumer: Person;
  let failNext = false;

  beforeAll(async () => {
    upstream = await startUpstream();
    stack = await createTestStack({ env: { GATEWAY_RATE_LIMIT_PER_MIN: '1000000' } });
    gateway = createGatewayHandler(stack.services);
    server = await serve(gateway);
    const provider = await createPerson(stack.services);
    consumer = await createConsumer(stack.services, 1_000_000);
    api = await createLiveApi(stack.services, {
      providerOrgId: provider.orgId,
      baseUrl: `${upstream.url}/base`,
      endpoints: [{ method: 'POST', path: '/echo', priceCents: 3 }],
    });
    upstream.handle(async (_req, res, body) => {
      const failing = failNext;
      failNext = false;
      await new Promise((r) => setTimeout(r, 30)); // long enough for duplicates to arrive while it runs
      res.writeHead(failing ? 503 : 200, { 'content-type': 'application/json' });
      res.end(failing ? '{"error":"planted"}' : body || '{}');
    });
  });
  afterAll(async () => {
    await expectNoDrift(gateway, stack?.services);
    await closeAll(server, gateway, stack, upstream);
  });

  let n = 0;
  it(
    'concurrent duplicates reach the upstream once and share its answer; after a failure the key is free',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 2, max: 6 }),
          fc.boolean(),
          fc.string({ minLength: 0, maxLength: 20 }),
          async (copies, firstFails, text) => {
            const idemKey = `dup-${++n}-${Date.now()}`;
            const body = { text };
            const send = () =>
              http(server.url, 'POST', `/v1/proxy/${api.slug}/echo`, {
                token: consumer.apiKey,
                body,
                headers: { 'idempotency-key': idemKey },
              });
            if (firstFails) {
              failNext = true;
              const failed = await send();
              expect(failed.status).toBeGreaterThanOrEqual(500);
            }
            const seenBefore = upstream.seen.length;
            const answers = await Promise.all(Array.from({ length: copies }, send));
            expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
            expect(upstream.seen.length - seenBefore).toBe(1);
            const originals = answers.filter((a) => a.body.meta.replayed !== true);
            expect(originals).toHaveLength(1);
            const original = originals[0]!.body.meta;
            for (const a of answers) {
              if (a.body.meta.replayed !== true) continue;
              expect(a.body.meta).toMatchObject({
                original_request_id: original.request_id,
                cost_cents: original.cost_cents,
                credit_applied_cents: original.credit_applied_cents,
                billable_cents: original.billable_cents,
              });
            }
            // Another body under the same key: 422.
            const other = await http(server.url, 'POST', `/v1/proxy/${api.slug}/echo`, {
              token: consumer.apiKey,
              body: { text: `${text}!` },
              headers: { 'idempotency-key': idemKey },
            });
            expect(other.status).toBe(422);
          },
        ),
        propertyParameters(RUNS / 2),
      );
      await gateway.drain.flush();
      // Charged once per key, whatever the duplicates.
      const [row] = await sql<{ n: number }>(
        stack.db.url,
        `select count(*)::int as n from usage_events where org_id = $1 and outcome = 'success'`,
        [consumer.orgId],
      );
      expect(row!.n).toBe(n);
    },
    propertyTimeout(RUNS / 2, 60_000),
  );
});
