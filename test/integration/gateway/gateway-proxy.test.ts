// The metered proxy end to end, on real Postgres, Redis and loopback upstreams: pass-through and credential injection,
// exact money under concurrency (credits, budgets, daily caps, per-call caps), idempotent replays, upstream faults
// mapped and never billed, terms (428), own API (403), Redis down (503), and usage/ledger rows that reconcile.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisCounterStore } from '../../../core/counters/index.js';
import { ManualClock } from '../../../core/clock.js';
import { createApiApp } from '../../../api/app.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, serve } from '../../helpers/http.js';
import { createLiveApi, type LiveApi } from '../../helpers/listings.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { Document } from '../../../db/entities/index.js';
import { newId } from '../../../core/ids.js';
import { idempotencyRecordKey } from '../../../core/spend/redis-spend-store.js';
import { closeAll } from '../../helpers/fixtures.js';

describe('gateway proxy', () => {
  let stack: TestStack;
  let gateway: GatewayHandler;
  let server: RunningHttpServer;
  let upstream: Upstream;
  let provider: Person;
  let api: LiveApi;
  const clock = new ManualClock(new Date('2026-11-22T12:00:00Z'));

  beforeAll(async () => {
    upstream = await startUpstream();
    stack = await createTestStack({
      clock,
      env: { GATEWAY_RATE_LIMIT_PER_MIN: '100000', GATEWAY_UPSTREAM_TIMEOUT_MS: '1500' },
    });
    gateway = createGatewayHandler(stack.services);
    server = await serve(gateway);
    provider = await createPerson(stack.services);
    api = await createLiveApi(stack.services, {
      providerOrgId: provider.orgId,
      baseUrl: `${upstream.url}/base`,
      credential: { secret: 'upstream-secret', injection: 'header', name: 'X-Api-Key' },
      endpoints: [
        { method: 'GET', path: '/items/{id}', priceCents: 1 },
        { method: 'POST', path: '/items', priceCents: 5 },
        { method: 'GET', path: '/free', priceCents: 0 },
        { method: 'GET', path: '/items/special', priceCents: 2 },
      ],
    });
  });
  afterAll(async () => {
    const report = await stack?.services.reconciliation.run();
    expect(report?.ok, JSON.stringify(report)).toBe(true);
    await closeAll(server, gateway, stack, upstream);
  });

  async function consumer(credit: number, keyCaps: Record<string, number | boolean> = {}): Promise<Person> {
    const p = await createPerson(stack.services);
    if (credit > 0) await stack.services.ledger.post({ orgId: p.orgId, kind: 'grant', amountCents: credit });
    const caps = Object.entries(keyCaps);
    if (caps.length > 0) {
      await sql(
        stack.db.url,
        `update api_keys set ${caps.map(([k], i) => `${k} = $${i + 2}`).join(', ')} where id = $1`,
        [p.keyId, ...caps.map(([, v]) => v)],
      );
    }
    return p;
  }
  // The calls answered so far are in Postgres first (the usage drain: docs/durability.md).
  const balance = async (orgId: string) => {
    await gateway.drain.flush();
    const [row] = await sql<{ credit_cents: string }>(stack.db.url, 'select credit_cents from orgs where id = $1', [
      orgId,
    ]);
    return Number(row!.credit_cents);
  };
  const call = (p: Person, method: string, path: string, opts: Parameters<typeof http>[3] = {}) =>
    http(server.url, method, `/v1/proxy/${api.slug}${path}`, { token: p.apiKey, ...opts });

  it('proxies method, path, query and body, injects the credential, and answers with billing meta', async () => {
    const c = await consumer(100);
    upstream.handle((req, res, body) => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ echoed: JSON.parse(body || 'null'), url: req.url }));
    });
    const before = upstream.seen.length;
    const res = await call(c, 'POST', '/items?x=1&y=two', {
      body: { name: 'widget' },
      headers: {
        'x-custom': 'kept',
        cookie: 'session=secret',
        'idempotency-key': 'k-pass-1',
        'x-request-id': 'caller-trace-0001',
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      ok: true,
      data: { echoed: { name: 'widget' }, url: '/base/items?x=1&y=two' },
      meta: { cost_cents: 5, price_cents_effective: 5, credit_applied_cents: 5, billable_cents: 0 },
    });
    expect(res.body.meta.request_id).toBe(res.headers.get('x-request-id'));
    // The caller's X-Request-Id never becomes ours: the usage row keeps it apart.
    expect(res.body.meta.request_id).toMatch(/^req_/);
    const seen = upstream.seen[before]!;
    expect(seen.method).toBe('POST');
    expect(seen.headers['x-api-key']).toBe('upstream-secret');
    expect(seen.headers['x-custom']).toBe('kept');
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers.cookie).toBeUndefined();
    expect(seen.headers['idempotency-key']).toBeUndefined();
    expect(await balance(c.orgId)).toBe(95);

    const [usage] = await sql(
      stack.db.url,
      'select key_id, api_id, endpoint_id, status, outcome, cost_cents, credit_applied_cents, idempotency_key, request_id, client_request_id from usage_events where org_id = $1',
      [c.orgId],
    );
    expect(usage).toEqual({
      key_id: c.keyId,
      api_id: api.apiId,
      endpoint_id: api.endpoints['POST /items'],
      status: 201,
      outcome: 'success',
      cost_cents: '5',
      credit_applied_cents: '5',
      idempotency_key: 'k-pass-1',
      request_id: res.body.meta.request_id,
      client_request_id: 'caller-trace-0001',
    });
    // The provider's earning is queued with the call (no lock on the provider's org row), then folded off the hot path.
    const [accrual] = await sql(
      stack.db.url,
      'select provider_org_id, gross_cents, fee_cents from earning_accruals where consumer_org_id = $1',
      [c.orgId],
    );
    expect(accrual).toEqual({ provider_org_id: provider.orgId, gross_cents: '5', fee_cents: '1' });
    await stack.services.earnings.foldAll();
    const ledger = await sql<{ org_id: string; kind: string; amount_cents: string }>(
      stack.db.url,
      "select org_id, kind, amount_cents from ledger_entries where reference like 'usage_batch:%' and (org_id = $1 or org_id = $2) order by kind",
      [c.orgId, provider.orgId],
    );
    expect(ledger.filter((l) => l.org_id === c.orgId)).toEqual([
      { org_id: c.orgId, kind: 'usage', amount_cents: '-5' },
    ]);
    expect(ledger.filter((l) => l.org_id === provider.orgId).map((l) => [l.kind, l.amount_cents])).toEqual(
      expect.arrayContaining([
        ['platform_fee', '-1'],
        ['provider_earning', '5'],
      ]),
    );
    upstream.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });

  it('matches literal paths before templates, 404s unknown endpoints, and serves free endpoints with no credit', async () => {
    const c = await consumer(0);
    const free = await call(c, 'GET', '/free');
    expect(free.status).toBe(200);
    expect(free.body.meta).toMatchObject({ cost_cents: 0, credit_applied_cents: 0, billable_cents: 0 });
    await gateway.drain.flush(); // the usage row is written after the answer
    const [row] = await sql(stack.db.url, 'select count(*)::int as n from usage_events where org_id = $1', [c.orgId]);
    expect(row).toEqual({ n: 1 }); // metered
    expectFailure(await call(c, 'GET', '/items/7'), 402, 'payment_required');
    expectFailure(await call(c, 'DELETE', '/items/7'), 404, 'not_found');
    expectFailure(await call(c, 'GET', '/nope'), 404, 'not_found');
    const rich = await consumer(10);
    expect((await call(rich, 'GET', '/items/special')).body.meta.cost_cents).toBe(2);
    expect((await call(rich, 'GET', '/items/other')).body.meta.cost_cents).toBe(1);
  });

  it('meta names a scheduled price increase and an active discount; idempotency records are kept over 24 h', async () => {
    const c = await consumer(100);
    const endpointId = api.endpoints['GET /items/special']!;
    await sql(
      stack.db.url,
      `update endpoints set pending_price_cents = 4, pending_price_effective_at = $2,
         discount = '{"percent": 50}'::jsonb where id = $1`,
      [endpointId, new Date('2026-12-01T00:00:00Z')],
    );
    gateway.proxy['catalog'].invalidate();
    try {
      const res = await call(c, 'GET', '/items/special', { headers: { 'Idempotency-Key': 'meta-1' } });
      expect(res.status).toBe(200);
      expect(res.body.meta).toMatchObject({
        cost_cents: 1,
        price_cents_effective: 1,
        price_increase: { price_cents: 4, effective_at: '2026-12-01T00:00:00.000Z' },
        discount: { percent: 50, off_cents: 1 },
      });
      const redis = (stack.services.counters as RedisCounterStore).client;
      await expect
        .poll(() => redis.pttl(idempotencyRecordKey(`${c.orgId}:${c.keyId}:meta-1`)))
        .toBeGreaterThan(24 * 3_600_000);
    } finally {
      await sql(
        stack.db.url,
        'update endpoints set pending_price_cents = null, pending_price_effective_at = null, discount = null where id = $1',
        [endpointId],
      );
      gateway.proxy['catalog'].invalidate();
    }
  });

  it('500 calls at concurrency 50 on a 1-cent endpoint against 100 cents: exactly 100 succeed, 400 get 402', async () => {
    const c = await consumer(100);
    const statuses: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < 500) {
          next += 1;
          statuses.push((await call(c, 'GET', `/items/${next}`)).status);
        }
      }),
    );
    expect(statuses).toHaveLength(500);
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.filter((s) => s === 402)).toHaveLength(400);
    expect(await balance(c.orgId)).toBe(0);
    const [n] = await sql(
      stack.db.url,
      "select count(*)::int as n from usage_events where org_id = $1 and outcome = 'success'",
      [c.orgId],
    );
    expect(n).toEqual({ n: 100 });
    expect(await stack.services.ledger.findDrift()).toEqual([]);
  });

  it('a key budget of 37 under 200 concurrent 5-cent calls is charged at most 35; per-call max refuses 6 > 5', async () => {
    const c = await consumer(10_000, { budget_cents: 37 });
    const results = await Promise.all(Array.from({ length: 200 }, () => call(c, 'POST', '/items', { body: { n: 1 } })));
    const ok = results.filter((r) => r.status === 200).length;
    expect(ok).toBe(7);
    for (const r of results.filter((x) => x.status !== 200)) expectFailure(r, 402, 'insufficient_budget');
    const [key] = await sql(stack.db.url, 'select spent_cents from api_keys where id = $1', [c.keyId]);
    expect(key).toEqual({ spent_cents: '35' });
    expect(await balance(c.orgId)).toBe(10_000 - 35);

    const capped = await consumer(100, { per_call_max_cents: 5 });
    await sql(stack.db.url, 'update endpoints set price_cents = 6 where id = $1', [api.endpoints['GET /items/{id}']]);
    gateway.proxy['catalog'].invalidate();
    try {
      expectFailure(await call(capped, 'GET', '/items/1'), 402, 'per_call_limit_exceeded');
      expect((await call(capped, 'POST', '/items', { body: {} })).status).toBe(200); // 5 is within the cap
    } finally {
      await sql(stack.db.url, 'update endpoints set price_cents = 1 where id = $1', [api.endpoints['GET /items/{id}']]);
      gateway.proxy['catalog'].invalidate();
    }
  });

  it('the daily cap holds for the UTC day and resets at midnight', async () => {
    const c = await consumer(1_000, { daily_cap_cents: 10 });
    clock.set(new Date('2026-11-22T23:59:00Z'));
    try {
      const first = await Promise.all(Array.from({ length: 5 }, () => call(c, 'POST', '/items', { body: {} })));
      expect(first.map((r) => r.status).sort()).toEqual([200, 200, 402, 402, 402]);
      expectFailure(
        first.find((r) => r.status === 402)!,
        402,
        'daily_cap_exceeded',
      );
      clock.set(new Date('2026-11-23T00:00:01Z'));
      expect((await call(c, 'POST', '/items', { body: {} })).status).toBe(200);
      expect((await call(c, 'POST', '/items', { body: {} })).status).toBe(200);
      expectFailure(await call(c, 'POST', '/items', { body: {} }), 402, 'daily_cap_exceeded');
      await gateway.drain.flush();
      // The key's row keeps its latest day's spend (the new day started over at 0).
      const days = await sql(
        stack.db.url,
        'select spent_day, day_spent_cents, spent_cents from api_keys where id = $1',
        [c.keyId],
      );
      expect(days).toEqual([{ spent_day: '2026-11-23', day_spent_cents: '10', spent_cents: '20' }]);
    } finally {
      clock.set(new Date('2026-11-22T12:00:00Z'));
    }
  });

  it('50 concurrent calls with one Idempotency-Key: one upstream call, one debit, 49 replays', async () => {
    const c = await consumer(100);
    let hits = 0;
    upstream.handle((_req, res) => {
      hits += 1;
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"v":1}');
      }, 100);
    });
    try {
      const results = await Promise.all(
        Array.from({ length: 50 }, () =>
          call(c, 'POST', '/items', { body: { a: 1 }, headers: { 'Idempotency-Key': 'same-key' } }),
        ),
      );
      expect(results.every((r) => r.status === 200)).toBe(true);
      expect(hits).toBe(1);
      const first = results.find((r) => !r.body.meta.replayed)!;
      const replays = results.filter((r) => r.body.meta.replayed === true);
      expect(replays).toHaveLength(49);
      for (const r of replays) {
        expect(r.body.data).toBeNull();
        expect(r.body.meta).toMatchObject({
          cost_cents: 5,
          credit_applied_cents: 5,
          billable_cents: 0,
          original_request_id: first.body.meta.request_id,
        });
      }
      expect(await balance(c.orgId)).toBe(95);
      // X-Idempotency-Key is the same key; another body under it is refused.
      const again = await call(c, 'POST', '/items', { body: { a: 1 }, headers: { 'X-Idempotency-Key': 'same-key' } });
      expect(again.body.meta.replayed).toBe(true);
      expectFailure(
        await call(c, 'POST', '/items', { body: { a: 2 }, headers: { 'Idempotency-Key': 'same-key' } }),
        422,
        'idempotency_key_reused',
      );
      expect(hits).toBe(1);
    } finally {
      upstream.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    }
  });

  it('upstream 500, reset, stall and oversize bodies map to 502 and 429 to upstream_rate_limited, never billed', async () => {
    const c = await consumer(100);
    const cases: [string, (res: ServerResponse) => void, number, string][] = [
      [
        '500',
        (res) => {
          res.writeHead(500);
          res.end('boom');
        },
        502,
        'upstream_error',
      ],
      ['reset', (res) => res.socket?.destroy(), 502, 'upstream_error'],
      ['stall', () => undefined, 502, 'upstream_error'],
      [
        'oversize',
        (res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          const chunk = Buffer.alloc(1024 * 1024, 'a');
          for (let i = 0; i < 12; i++) res.write(chunk);
          res.end();
        },
        502,
        'upstream_error',
      ],
      [
        '429',
        (res) => {
          res.writeHead(429, { 'retry-after': '7' });
          res.end();
        },
        429,
        'upstream_rate_limited',
      ],
    ];
    try {
      for (const [name, handler, status, code] of cases) {
        upstream.handle((_req, res) => handler(res));
        const res = await call(c, 'GET', '/items/1');
        expectFailure(res, status, code);
        if (name === '500') expect(res.body.error.details).toMatchObject({ upstream_status: 500 });
        if (name === '429') expect(res.headers.get('retry-after')).toBe('7');
      }
    } finally {
      upstream.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    }
    expect(await balance(c.orgId)).toBe(100);
    // The reservations were released: the whole balance is still spendable.
    const spend = await Promise.all(Array.from({ length: 100 }, (_, i) => call(c, 'GET', `/items/${i}`)));
    expect(spend.every((r) => r.status === 200)).toBe(true);
    expect(await balance(c.orgId)).toBe(0);
  });

  it('terms required and not accepted: 428 before any upstream call or charge; accepted: 200', async () => {
    const c = await consumer(10);
    const em = stack.services.orm.em.fork();
    const doc = em.create(Document, {
      id: newId('document'),
      org: provider.orgId,
      api: api.apiId,
      kind: 'terms',
      version: '1',
      body: 'Be nice.',
      contentHash: 'a'.repeat(64),
      acceptanceMode: 'required',
      status: 'active',
      activatedAt: new Date(),
    });
    await em.flush();
    gateway.proxy['catalog'].invalidate();
    const before = upstream.seen.length;
    try {
      const res = await call(c, 'GET', '/items/1');
      expectFailure(res, 428, 'terms_acceptance_required');
      expect(res.body.error.details).toMatchObject({
        document_id: doc.id,
        content_hash: 'a'.repeat(64),
        approval_url: expect.stringContaining(`/terms/${api.slug}`),
        snapshot_url: expect.stringContaining(doc.id),
      });
      expect(upstream.seen.length).toBe(before);
      expect(await balance(c.orgId)).toBe(10);
      await sql(
        stack.db.url,
        'insert into terms_acceptances (id, org_id, document_id, accepted_by_id, content_hash) values ($1, $2, $3, $4, $5)',
        [newId('termsAcceptance'), c.orgId, doc.id, c.userId, doc.contentHash],
      );
      expect((await call(c, 'GET', '/items/1')).status).toBe(200);
    } finally {
      await sql(stack.db.url, "update documents set status = 'superseded', superseded_at = now() where id = $1", [
        doc.id,
      ]);
      gateway.proxy['catalog'].invalidate();
    }
  });

  it('refuses calls to your own API (403) and calls of a suspended org (402)', async () => {
    expectFailure(await call(provider, 'GET', '/items/1'), 403, 'forbidden');
    const c = await consumer(100);
    expect((await call(c, 'GET', '/items/1')).status).toBe(200);
    await sql(stack.db.url, "update orgs set suspended = true, suspended_reason = 'operator: test' where id = $1", [
      c.orgId,
    ]);
    await stack.services.spend.forgetOrg(c.orgId);
    expectFailure(await call(c, 'GET', '/items/1'), 402, 'payment_required');
  });

  it('413 for a request body over GATEWAY_MAX_REQUEST_BYTES, 400 for a malformed Idempotency-Key', async () => {
    const c = await consumer(100);
    expectFailure(
      await call(c, 'POST', '/items', { rawBody: Buffer.alloc(1024 * 1024 + 1, 'x') }),
      413,
      'validation_failed',
    );
    expectFailure(
      await call(c, 'POST', '/items', { body: {}, headers: { 'Idempotency-Key': 'x'.repeat(201) } }),
      400,
      'validation_failed',
    );
    expect(await balance(c.orgId)).toBe(100);
  });

  it('usage flows into GET /v1/usage and provider analytics; crossing the auto-reload threshold marks the org', async () => {
    const c = await consumer(52);
    await sql(
      stack.db.url,
      'update orgs set auto_reload_enabled = true, auto_reload_threshold_cents = 50, auto_reload_amount_cents = 500 where id = $1',
      [c.orgId],
    );
    await stack.services.spend.forgetOrg(c.orgId);
    expect((await call(c, 'POST', '/items', { body: {} })).status).toBe(200);
    await gateway.drain.flush();
    await stack.services.earnings.foldAll();
    const [org] = await sql(stack.db.url, 'select credit_cents, reload_requested_at from orgs where id = $1', [
      c.orgId,
    ]);
    expect(org).toMatchObject({ credit_cents: '47', reload_requested_at: expect.anything() });

    const apiApp = await serve(createApiApp(stack.services).callback());
    clock.advance(1_000); // the usage range ends at "now" (exclusive); the manual clock stands still otherwise
    try {
      const usage = await http(apiApp.url, 'GET', '/v1/usage', { token: c.apiKey });
      expect(usage.status).toBe(200);
      expect(usage.body.data).toHaveLength(1);
      expect(usage.body.data[0]).toMatchObject({ api_slug: api.slug, cost_cents: 5, status: 200 });
      const analytics = await http(apiApp.url, 'GET', '/v1/provider/analytics', { token: provider.session });
      expect(analytics.status).toBe(200);
      expect(analytics.body.data.totals.successful_calls).toBeGreaterThan(0);
      expect(analytics.body.data.totals.gmv_cents).toBeGreaterThan(0);
      expect(analytics.body.data.totals.provider_earnings_cents).toBe(analytics.body.data.totals.gmv_cents);
    } finally {
      await apiApp.close();
    }
  });

  it('a debit from elsewhere racing an in-flight call: charged what is left, the rest uncollected, books balanced', async () => {
    const c = await consumer(10);
    expect((await call(c, 'GET', '/items/1')).status).toBe(200); // the fast state now holds a balance of 9
    // That call's commit hands Postgres's totals back to the fast state: let it land first, or a commit after the
    // chargeback would already show the fast state the lower balance and there would be no race to test.
    await gateway.drain.flush();
    // A chargeback lands in Postgres; the gateway's snapshot is still the older, higher balance.
    await stack.services.ledger.post({ orgId: c.orgId, kind: 'chargeback', amountCents: -7 });
    const res = await call(c, 'POST', '/items', { body: {} });
    expect(res.status).toBe(200);
    // The answer is the fast state's view (docs/durability.md: a debit from elsewhere it has not seen yet)...
    expect(res.body.meta).toMatchObject({ cost_cents: 5, credit_applied_cents: 5, billable_cents: 0 });
    // ...Postgres, which never lets a prepaid balance go negative, charges what is left and records the rest unpaid.
    expect(await balance(c.orgId)).toBe(0);
    const [row] = await sql(
      stack.db.url,
      'select credit_applied_cents, billable_cents from usage_events where request_id = $1',
      [res.body.meta.request_id],
    );
    expect(row).toEqual({ credit_applied_cents: '2', billable_cents: '3' });
    const report = await stack.services.reconciliation.run();
    expect(report).toMatchObject({ ok: true, drift: [], unmatched_calls: [] });
  });

  it('rebuilds lost counters from Postgres: spend survives a Redis flush', async () => {
    const c = await consumer(1_000, { budget_cents: 12 });
    expect((await call(c, 'POST', '/items', { body: {} })).status).toBe(200);
    expect((await call(c, 'POST', '/items', { body: {} })).status).toBe(200);
    // Postgres has both calls (a flush before the drain loses what was not drained: docs/durability.md).
    await gateway.drain.flush();
    const redis = (stack.services.counters as RedisCounterStore).client;
    const keys = await redis.keys(`${stack.config.counters.keyPrefix}sp:*`);
    await redis.del(...keys.map((k) => k.slice(stack.config.counters.keyPrefix.length)));
    expectFailure(await call(c, 'POST', '/items', { body: {} }), 402, 'insufficient_budget');
    expect(await balance(c.orgId)).toBe(990);
  });
});
