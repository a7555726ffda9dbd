// The ledger and spend governance, model-based (fast-check; docs/testing-properties.md). Each run is a random script
// against the real gateway over HTTP (real Redis and Postgres, the usage drain, the reservation sweeper, a loopback
// upstream that can be told to fail) for a fresh org, prepaid or card-billed, with three keys (one the child of the
// first) under random budgets, daily caps and per-call maxima, and an API of three random prices. Operations:
// top-ups, paid calls (some failing upstream, some with an Idempotency-Key and replayed, some reusing the key for
// another body), concurrent bursts, reservations abandoned as by a crashed gateway, sweeps with the clock moved past
// their expiry (across UTC midnight on the way) and drain flushes. Each answer is checked against the model
// (test/helpers/property-spend-model.ts); after each run Postgres must agree with the model (balance, every key's
// lifetime and daily spend, the calls booked), no reservation may be left open, and the books must balance
// (test/helpers/books.ts).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../../core/auth/scopes.js';
import { ManualClock } from '../../../core/clock.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { Admissions, RESERVATION_MARGIN_MS } from '../../../core/spend/admission.js';
import { MemorySpendStore } from '../../../core/spend/memory-spend-store.js';
import { RedisSpendStore } from '../../../core/spend/redis-spend-store.js';
import { UsageCommitter } from '../../../core/spend/usage-committer.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { createPerson } from '../../helpers/accounts.js';
import { checkBooks, openReservations, type CallAnswer } from '../../helpers/books.js';
import { sql } from '../../helpers/db.js';
import { REDIS_URL } from '../../helpers/env.js';
import { http, serve, type HttpResult } from '../../helpers/http.js';
import { createLiveApi } from '../../helpers/listings.js';
import { propertyParameters, propertyTimeout } from '../../helpers/property-runs.js';
import { SpendModel, type KeyCaps } from '../../helpers/property-spend-model.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { closeAll } from '../../helpers/fixtures.js';

const RUNS = 30;
/** Every run starts 2.5 minutes before UTC midnight: a few sweeps carry it into the next day (daily caps reset). */
const START = Date.UTC(2026, 10, 22, 23, 57, 30);

// ---- the scripts ----

const cents = (max: number) => fc.integer({ min: 0, max });
const optionalCap = (max: number) => fc.option(cents(max), { nil: null, freq: 3 });
const keyIndex = fc.integer({ min: 0, max: 2 });
const endpoint = fc.integer({ min: 0, max: 2 });

type Op =
  | { t: 'topup'; cents: number }
  | { t: 'call'; key: number; ep: number; fail: boolean; idem: number | null; body: number }
  | { t: 'burst'; calls: { key: number; ep: number }[] }
  | { t: 'abandon'; key: number; ep: number }
  | { t: 'sweep' }
  | { t: 'flush' }
  /** The last call made with an Idempotency-Key, sent again as it was. */
  | { t: 'replay' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ t: fc.constant('topup' as const), cents: fc.integer({ min: 1, max: 300 }) }), weight: 2 },
  {
    arbitrary: fc.record({
      t: fc.constant('call' as const),
      key: keyIndex,
      ep: endpoint,
      fail: fc.constantFrom(false, false, false, true),
      idem: fc.option(fc.integer({ min: 0, max: 1 }), { nil: null, freq: 2 }),
      body: fc.constantFrom(0, 0, 0, 1),
    }),
    weight: 8,
  },
  {
    arbitrary: fc.record({
      t: fc.constant('burst' as const),
      calls: fc.array(fc.record({ key: keyIndex, ep: endpoint }), { minLength: 2, maxLength: 5 }),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ t: fc.constant('abandon' as const), key: keyIndex, ep: endpoint }), weight: 3 },
  { arbitrary: fc.constant({ t: 'sweep' as const }), weight: 1 },
  { arbitrary: fc.constant({ t: 'flush' as const }), weight: 1 },
  { arbitrary: fc.constant({ t: 'replay' as const }), weight: 2 },
);

const caps: fc.Arbitrary<Omit<KeyCaps, 'parent'>> = fc.record({
  budgetCents: optionalCap(400),
  dailyCapCents: optionalCap(200),
  perCallMaxCents: optionalCap(120),
});

const scenario = fc.record({
  mode: fc.constantFrom<'prepaid' | 'card'>('prepaid', 'prepaid', 'card'),
  creditLimitCents: cents(200),
  startCents: fc.oneof(cents(20), cents(200), cents(1_000)),
  prices: fc.tuple(fc.constantFrom(0, 1), fc.integer({ min: 1, max: 25 }), fc.integer({ min: 1, max: 150 })),
  keys: fc.tuple(caps, caps, caps),
  ops: fc.array(op, { minLength: 1, maxLength: 30, size: 'max' }),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer S> ? S : never;

// ---- the run ----

/** The gateway's fast state: Redis (production), and the in-process twin of the embedded all-in-one. */
const STORES: [string, number][] = [
  ['redis', RUNS],
  ['memory', Math.ceil(RUNS / 2)],
];

describe.each(STORES)('property: the ledger and spend governance against the model (%s store)', (store, runs) => {
  const clock = new ManualClock(START);
  let stack: TestStack;
  let gateway: GatewayHandler;
  let server: RunningHttpServer;
  let upstream: Upstream;
  let providerOrgId: string;
  let admissions: Admissions;
  let committer: UsageCommitter;
  let failUpstream = false;
  /** Every answer of every run (the books check is over the whole database). */
  const answers: CallAnswer[] = [];
  const stats = { runs: 0, calls: 0, ok: 0, refused: 0, failed: 0, replays: 0, transient: 0, abandoned: 0 };

  beforeAll(async () => {
    upstream = await startUpstream((_req, res) => {
      res.writeHead(failUpstream ? 500 : 200, { 'content-type': 'application/json' });
      res.end(failUpstream ? '{"error":"planted"}' : '{"ok":true}');
    });
    stack = await createTestStack({
      clock,
      env: {
        GATEWAY_RATE_LIMIT_PER_MIN: '1000000',
        GATEWAY_SWEEP_INTERVAL_MS: '60000',
        // Without REDIS_URL the services use the in-process counters and spend store.
        ...(store === 'memory' ? { REDIS_URL: undefined as unknown as string } : {}),
      },
    });
    expect(stack.services.spend).toBeInstanceOf(store === 'memory' ? MemorySpendStore : RedisSpendStore);
    gateway = createGatewayHandler(stack.services);
    server = await serve(gateway);
    providerOrgId = (await createPerson(stack.services)).orgId;
    committer = new UsageCommitter({
      orm: stack.services.orm,
      logger: stack.services.logger,
      feePercent: stack.config.billing.platformFeePercent,
      prepared: true,
    });
    // A second admission path over the same stores: its reservations are never settled (a crashed gateway's).
    admissions = new Admissions(stack.services, committer, gateway.drain);
  });

  afterAll(async () => {
    console.log(`property-spend (${store}): ${JSON.stringify(stats)}`);
    await closeAll(server, admissions, gateway);
    await committer?.flush();
    await stack?.close();
    await upstream?.close();
  });

  /** A fresh org, keys and API for one scenario. */
  async function setUp(s: Scenario) {
    const person = await createPerson(stack.services);
    const orgId = person.orgId;
    await sql(stack.db.url, 'update orgs set billing_mode = $2, credit_limit_cents = $3 where id = $1', [
      orgId,
      s.mode,
      s.creditLimitCents,
    ]);
    if (s.startCents > 0) await stack.services.ledger.post({ orgId, kind: 'grant', amountCents: s.startCents });
    const keyCaps: KeyCaps[] = s.keys.map((c, i) => ({ ...c, parent: i === 2 ? 0 : null }));
    const em = stack.services.orm.em.fork();
    const keys: { id: string; plaintext: string }[] = [];
    for (const [i, c] of keyCaps.entries()) {
      const { key, plaintext } = stack.services.keys.create(em, {
        orgId,
        name: `prop-${i}`,
        scopes: SCOPES,
        source: 'signup',
        parentKeyId: c.parent === null ? null : keys[c.parent]!.id,
        budgetCents: c.budgetCents,
        dailyCapCents: c.dailyCapCents,
        perCallMaxCents: c.perCallMaxCents,
      });
      keys.push({ id: key.id, plaintext });
      if (c.parent === null) await em.flush(); // the child's parent must exist first
    }
    await em.flush();
    const api = await createLiveApi(stack.services, {
      providerOrgId,
      baseUrl: `${upstream.url}/base`,
      endpoints: s.prices.map((priceCents, i) => ({ method: 'POST', path: `/p${i}`, priceCents })),
    });
    return { orgId, keys, slug: api.slug, model: new SpendModel(s.mode, s.creditLimitCents, s.startCents, keyCaps) };
  }

  const day = () => clock.now().toISOString().slice(0, 10);

  /** The refusal reason an answer gives (a 402's code, or its `details.reason` for payment_required). */
  function reasonOf(res: HttpResult): string {
    const error = res.body?.error as { code?: string; details?: { reason?: string } } | undefined;
    return error?.code === 'payment_required' ? (error.details?.reason ?? 'payment_required') : (error?.code ?? '?');
  }

  function record(res: HttpResult): CallAnswer {
    const meta = (res.body?.meta ?? {}) as Record<string, unknown>;
    const answer: CallAnswer = {
      status: res.status,
      requestId: (meta.request_id as string | undefined) ?? res.headers.get('x-request-id') ?? undefined,
      costCents: meta.cost_cents as number | undefined,
      replayed: meta.replayed === true,
      originalRequestId: meta.original_request_id as string | undefined,
      code: (res.body?.error as { code?: string } | undefined)?.code,
    };
    answers.push(answer);
    stats.calls += 1;
    return answer;
  }

  async function runScenario(s: Scenario): Promise<void> {
    stats.runs += 1;
    clock.set(START);
    const { orgId, keys, slug, model } = await setUp(s);
    const trace: string[] = [];
    const call = async (key: number, ep: number, body: number, idemKey: string | null) =>
      http(server.url, 'POST', `/v1/proxy/${slug}/p${ep}`, {
        token: keys[key]!.plaintext,
        body: { v: body },
        headers: idemKey === null ? {} : { 'idempotency-key': idemKey },
      });
    /** Per key, per Idempotency-Key: the request it was first used for and the original answer's meta. */
    const idem = new Map<string, { request: string; meta: Record<string, unknown> }>();

    const fail = (message: string): never => {
      throw new Error(`${message}\nmodel: ${JSON.stringify(model)}\ntrace:\n  ${trace.join('\n  ')}`);
    };

    let lastIdempotent: Extract<Op, { t: 'call' }> | null = null;
    for (const planned of s.ops) {
      const o: Op = planned.t === 'replay' && lastIdempotent ? lastIdempotent : planned;
      if (o.t === 'call' && o.idem !== null) lastIdempotent = o;
      trace.push(JSON.stringify(o));
      switch (o.t) {
        case 'topup': {
          await stack.services.ledger.post({ orgId, kind: 'grant', amountCents: o.cents });
          // What the gateway does when the ledger's writer announces the change (core/spend/gateway-events.ts).
          await stack.services.spend.forgetOrg(orgId);
          model.balanceCents += o.cents;
          break;
        }
        case 'call': {
          const price = s.prices[o.ep]!;
          const clientKey = o.idem === null ? null : `idem-${o.idem}`;
          const request = `${o.ep}:${o.body}`;
          const known = clientKey === null ? undefined : idem.get(`${o.key}|${clientKey}`);
          failUpstream = o.fail;
          let res: HttpResult;
          try {
            res = await call(o.key, o.ep, o.body, clientKey);
          } finally {
            failUpstream = false;
          }
          const answer = record(res);
          if (known) {
            // The key was used before: a replay of the original answer, or a mismatch; never a second charge.
            if (known.request !== request) {
              if (res.status !== 422 || answer.code !== 'idempotency_key_reused')
                fail(`reused key with another request answered ${res.status} ${res.text}`);
              break;
            }
            if (res.status !== 200 || res.body.meta.replayed !== true) fail(`expected a replay: ${res.text}`);
            const meta = res.body.meta as Record<string, unknown>;
            for (const f of ['cost_cents', 'credit_applied_cents', 'billable_cents'] as const) {
              if (meta[f] !== known.meta[f]) fail(`replay ${f} ${String(meta[f])} != ${String(known.meta[f])}`);
            }
            if (meta.original_request_id !== known.meta.request_id) fail(`replay names the wrong original`);
            stats.replays += 1;
            break;
          }
          const want = model.refusal(o.key, price, day());
          if (want === null && res.status === 402) {
            // Allowed only transiently: balances re-read from Postgres while the drain still holds a booked call as
            // pending count it twice until its ack (conservative). Once the drain is flushed it must pass.
            await gateway.drain.flush();
            stats.transient += 1;
            failUpstream = o.fail;
            try {
              res = await call(o.key, o.ep, o.body, clientKey);
            } finally {
              failUpstream = false;
            }
            record(res);
          }
          if (want !== null) {
            if (res.status !== 402 || reasonOf(res) !== want)
              fail(`expected 402 ${want}, got ${res.status} ${res.text}`);
            stats.refused += 1;
            break;
          }
          if (o.fail) {
            if (res.status < 500 || res.body.ok !== false)
              fail(`a failing upstream answered ${res.status} ${res.text}`);
            model.failures += 1;
            stats.failed += 1;
            break; // refunded: nothing charged, and an Idempotency-Key is free again
          }
          if (res.status !== 200) fail(`expected 200, got ${res.status} ${res.text}`);
          const meta = res.body.meta as Record<string, unknown>;
          const applied = model.creditApplied(price);
          if (meta.cost_cents !== price) fail(`cost ${String(meta.cost_cents)} != price ${price}`);
          if (meta.credit_applied_cents !== applied || meta.billable_cents !== price - applied) {
            fail(`credit applied ${String(meta.credit_applied_cents)}/${String(meta.billable_cents)}, want ${applied}`);
          }
          model.charge(o.key, price, day());
          stats.ok += 1;
          if (clientKey !== null) idem.set(`${o.key}|${clientKey}`, { request, meta });
          break;
        }
        case 'burst': {
          const results = await Promise.all(o.calls.map((c) => call(c.key, c.ep, 0, null)));
          const refused: { key: number; price: number; reason: string }[] = [];
          results.forEach((res, i) => {
            const c = o.calls[i]!;
            record(res);
            if (res.status === 200) {
              if (res.body.meta.cost_cents !== s.prices[c.ep]) fail(`burst cost ${res.text}`);
              model.charge(c.key, s.prices[c.ep]!, day());
              stats.ok += 1;
            } else if (res.status === 402) {
              refused.push({ key: c.key, price: s.prices[c.ep]!, reason: reasonOf(res) });
              stats.refused += 1;
            } else fail(`burst call answered ${res.status} ${res.text}`);
          });
          // Whatever the order, no cap was passed; and each refusal is right once the burst's successes count.
          const broken = model.violations();
          if (broken.length) fail(`after a burst: ${broken.join('; ')}`);
          for (const r of refused) {
            if (model.refusal(r.key, r.price, day()) === null) {
              fail(`burst call refused (${r.reason}) though it fits after every success of the burst`);
            }
          }
          break;
        }
        case 'abandon': {
          const price = s.prices[o.ep]!;
          const { key } = await stack.services.keys.authenticate(keys[o.key]!.plaintext);
          const decision = await admissions.admit({
            orgId,
            key,
            now: clock.now(),
            priceCents: price,
            clientKey: null,
            requestHash: '',
            requestId: `req_abandoned_${stats.abandoned}`,
          });
          const want = model.refusal(o.key, price, day());
          if (want === null) {
            if (!('commit' in decision)) fail(`abandoned admission was not admitted: ${JSON.stringify(decision)}`);
            if (price > 0) model.holds.push({ key: o.key, day: day(), priceCents: price });
            stats.abandoned += 1;
          } else if (!('kind' in decision) || decision.kind !== 'refused') {
            fail(`abandoned admission should be refused (${want})`);
          }
          break;
        }
        case 'sweep':
          await sweep();
          model.holds = [];
          break;
        case 'flush':
          await gateway.drain.flush();
          break;
        case 'replay':
          break; // no idempotent call yet
      }
      const broken = model.violations();
      if (broken.length) fail(broken.join('; '));
    }

    // The end of a run: everything swept and booked; Postgres agrees with the model.
    await sweep();
    model.holds = [];
    await gateway.drain.flush();
    const open = await stack.services.spend.expired(Number.MAX_SAFE_INTEGER, 1_000);
    if (open.length) fail(`open reservations after the sweep: ${JSON.stringify(open)}`);
    if (store === 'redis') {
      const sets = await openReservations(REDIS_URL, stack.config.counters.keyPrefix);
      if (sets.length) fail(`reservations left in Redis after the sweep: ${JSON.stringify(sets)}`);
    }
    const [org] = await sql<{ credit: string }>(stack.db.url, 'select credit_cents as credit from orgs where id = $1', [
      orgId,
    ]);
    if (Number(org!.credit) !== model.balanceCents) fail(`Postgres balance ${org!.credit} != ${model.balanceCents}`);
    const spent = await sql<{ id: string; spent: string }>(
      stack.db.url,
      'select id, spent_cents as spent from api_keys where id = any($1)',
      [keys.map((k) => k.id)],
    );
    keys.forEach((k, i) => {
      const row = spent.find((r) => r.id === k.id);
      if (Number(row?.spent) !== model.spent[i]) fail(`key ${i} spent ${row?.spent} in Postgres, ${model.spent[i]}`);
    });
    const days = await sql<{ key_id: string; day: string; spent: string }>(
      stack.db.url,
      `select id as key_id, spent_day as day, day_spent_cents as spent from api_keys
        where id = any($1) and day_spent_cents <> 0`,
      [keys.map((k) => k.id)],
    );
    const pgDays = new Map(
      days.map((d) => [
        model.dayKey(
          keys.findIndex((k) => k.id === d.key_id),
          d.day,
        ),
        +d.spent,
      ]),
    );
    // Postgres keeps each key's latest day (issue 32): the model's latest day with spend, per key.
    const latest = new Map<string, [string, number]>();
    for (const [dk, v] of model.daySpent) {
      if (v === 0) continue;
      const day = dk.slice(dk.lastIndexOf('|') + 1);
      const key = dk.slice(0, dk.lastIndexOf('|'));
      const seen = latest.get(key);
      if (!seen || seen[0].slice(seen[0].lastIndexOf('|') + 1) < day) latest.set(key, [dk, v]);
    }
    const modelDays = new Map([...latest.values()]);
    if (JSON.stringify([...pgDays].sort()) !== JSON.stringify([...modelDays].sort())) {
      fail(`daily spend in Postgres ${JSON.stringify([...pgDays])} != ${JSON.stringify([...modelDays])}`);
    }
    const [usage] = await sql<{ ok: number; failed: number }>(
      stack.db.url,
      `select count(*) filter (where outcome = 'success')::int as ok, count(*) filter (where outcome = 'failed')::int as failed
         from usage_events where org_id = $1`,
      [orgId],
    );
    if (usage!.ok !== model.successes) fail(`${usage!.ok} success rows in Postgres, ${model.successes} in the model`);
    if (usage!.failed !== model.failures) fail(`${usage!.failed} failed rows, ${model.failures} in the model`);
    const books = await checkBooks(stack.db.url, answers, { settleTimeoutMs: 0, throwOnFailure: false });
    if (!books.ok) fail(`books: ${books.problems.join('; ')}`);
  }

  /** Move the clock past every reservation's expiry and sweep (as each gateway's timer would). */
  async function sweep(): Promise<void> {
    clock.advance(stack.config.gateway.upstreamTimeoutMs + RESERVATION_MARGIN_MS + 1);
    await gateway.sweeper.sweepOnce();
  }

  it(
    'random top-ups, calls, failures, replays, bursts, crashes and sweeps: answers, Postgres and the books agree',
    async () => {
      await fc.assert(fc.asyncProperty(scenario, runScenario), propertyParameters(runs, { timeLimitMs: 150_000 }));
    },
    propertyTimeout(runs, 170_000),
  );
});
