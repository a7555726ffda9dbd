// GET /v1/apis/{slug}/quote (issue 11 item 8) over HTTP with the real gateway beside it: the quote resolves a method
// and path exactly as the gateway does (literal before template, the unsafe-path rule, 404s), prices it, and for a
// caller with a key says whether the gateway would admit the call now; each refusal is checked against the gateway's
// own answer to the same call (code, status and details). Quoting spends nothing, reserves nothing and does not use
// up the rate limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, serve, describe as show } from '../../helpers/http.js';
import type { LiveApi } from '../../helpers/listings.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { closeAll, createConsumer, createPaidApi } from '../../helpers/fixtures.js';
import { requireTerms } from '../../helpers/mcp-eras.js';

const RATE_LIMIT = 4;

describe('quote', () => {
  let stack: TestStack;
  let gateway: GatewayHandler;
  let gw: RunningHttpServer;
  let server: RunningHttpServer;
  let base: string;
  let upstream: Upstream;
  let provider: Person;
  let api: LiveApi & { provider: Person };
  let termsApi: LiveApi;

  beforeAll(async () => {
    upstream = await startUpstream();
    stack = await createTestStack({ env: { GATEWAY_RATE_LIMIT_PER_MIN: String(RATE_LIMIT) } });
    gateway = createGatewayHandler(stack.services);
    gw = await serve(gateway);
    server = await serve(createApiApp(stack.services).callback());
    base = server.url;
    api = await createPaidApi(stack.services, {
      baseUrl: upstream.url,
      slug: 'quoted',
      endpoints: [
        { method: 'GET', path: '/paid', priceCents: 5 },
        { method: 'GET', path: '/free', priceCents: 0 },
        { method: 'GET', path: '/items/{id}', priceCents: 3 },
        { method: 'GET', path: '/items/special', priceCents: 2 },
        { method: 'POST', path: '/items/{id}', priceCents: 10 },
      ],
    });
    await sql(
      stack.db.url,
      `update endpoints set pending_price_cents = 6, pending_price_effective_at = now() + interval '7 days',
              discount = '{"amount_cents": 1, "label": "promo"}' where id = $1`,
      [api.endpoints['GET /items/{id}']],
    );
    provider = api.provider;
    termsApi = await createPaidApi(stack.services, {
      provider,
      baseUrl: upstream.url,
      slug: 'quoted-terms',
      endpoints: [{ method: 'GET', path: '/free', priceCents: 0 }],
    });
    await requireTerms(base, provider.session, termsApi.apiId);
  });
  afterAll(async () => {
    await gw?.close();
    await stack?.services.earnings.foldAll();
    expect(await stack?.services.ledger.findDrift()).toEqual([]);
    await closeAll(server, gateway, stack, upstream);
  });

  const quote = (slug: string, method: string, path: string, token?: string) =>
    http(base, 'GET', `/v1/apis/${slug}/quote?method=${method}&path=${encodeURIComponent(path)}`, { token });
  const call = (slug: string, method: string, path: string, token: string) =>
    http(gw.url, method, `/v1/proxy/${slug}${path}`, { token });

  /** A consumer with `credits` and, optionally, caps on its key (set before the key is first used). */
  async function consumer(
    credits: number,
    caps: Partial<Record<'budget_cents' | 'per_call_max_cents' | 'daily_cap_cents', number>> & {
      approval_mode?: boolean;
    } = {},
    options: Parameters<typeof createPerson>[1] = {},
  ): Promise<Person> {
    const person = await createConsumer(stack.services, credits, options);
    for (const [column, value] of Object.entries(caps)) {
      await sql(stack.db.url, `update api_keys set ${column} = $1 where id = $2`, [value, person.keyId]);
    }
    return person;
  }

  /** The quote refuses with the same code, status and details as the gateway does for the same call. */
  async function expectRefusalLikeGateway(person: Person, path: string, status: number, code: string) {
    const q = await quote('quoted', 'GET', path, person.apiKey);
    expect(q.status, show(q)).toBe(200);
    const admission = q.body.data.admission;
    expect(admission, show(q)).toMatchObject({ allowed: false, error_code: code, status });
    const real = await call('quoted', 'GET', path, person.apiKey);
    expectFailure(real, status, code);
    expect(admission.message).toBe(real.body.error.message);
    expect(admission.details).toEqual(real.body.error.details);
    return admission as { details: Record<string, unknown> };
  }

  describe('resolution and price (anonymous)', () => {
    it('resolves like the gateway: a literal path before a template, with the effective price', async () => {
      const special = await quote('quoted', 'GET', '/items/special');
      expect(special.status, show(special)).toBe(200);
      expect(special.body.data).toEqual({
        api: 'quoted',
        endpoint: {
          endpoint_id: api.endpoints['GET /items/special'],
          method: 'GET',
          path: '/items/special',
          summary: null,
          removal: null,
        },
        gateway_url: `${stack.config.urls.gateway}/v1/proxy/quoted/items/special`,
        price_cents: 2,
        price_cents_effective: 2,
        price_increase: null,
        discount: null,
      });
      expect(special.body.data.admission).toBeUndefined();
      const item = await quote('quoted', 'get', '/items/42?verbose=1');
      expect(item.body.data, show(item)).toMatchObject({
        endpoint: { endpoint_id: api.endpoints['GET /items/{id}'], path: '/items/{id}' },
        gateway_url: `${stack.config.urls.gateway}/v1/proxy/quoted/items/42`,
        price_cents: 3,
        price_cents_effective: 2,
        price_increase: { price_cents: 6, effective_at: expect.any(String) },
        discount: { amount_cents: 1, label: 'promo', off_cents: 1 },
      });
      const post = await quote('quoted', 'POST', '/items/42');
      expect(post.body.data.endpoint.endpoint_id).toBe(api.endpoints['POST /items/{id}']);
    });

    it('unknown endpoint, method or slug → 404 as at the gateway; an unsafe path → 400 as at the gateway', async () => {
      const rich = await consumer(100);
      for (const [method, path] of [
        ['GET', '/nope'],
        ['DELETE', '/paid'],
        ['GET', '/items/1/2'],
      ] as const) {
        expectFailure(await quote('quoted', method, path), 404, 'not_found');
        expectFailure(await call('quoted', method, path, rich.apiKey), 404, 'not_found');
      }
      expectFailure(await quote('no-such-api', 'GET', '/paid'), 404, 'not_found');
      for (const path of ['/items/..%2fpaid', '/items/%2e%2e', '/items/a\\b', '/items/a%00']) {
        expectFailure(await quote('quoted', 'GET', path), 400, 'validation_failed');
      }
      expectFailure(await call('quoted', 'GET', '/items/..%2fpaid', rich.apiKey), 400, 'validation_failed');
    });

    it('bad query → 400', async () => {
      for (const q of [
        'method=GET',
        'path=/paid',
        'method=TRACE&path=/paid',
        'method=GET&path=paid',
        'method=GET&path=/paid&x=1',
      ]) {
        expectFailure(await http(base, 'GET', `/v1/apis/quoted/quote?${q}`), 400, 'validation_failed');
      }
      expectFailure(
        await http(base, 'GET', `/v1/apis/quoted/quote?method=GET&path=/${'a'.repeat(2001)}`),
        400,
        'validation_failed',
      );
    });
  });

  describe('admission with a key', () => {
    it('allowed when the gateway admits the call; quoting spends nothing and leaves the rate limit alone', async () => {
      const rich = await consumer(100);
      for (let i = 0; i < RATE_LIMIT * 3; i++) {
        const q = await quote('quoted', 'GET', '/paid', rich.apiKey);
        expect(q.body.data.admission, show(q)).toEqual({ allowed: true });
      }
      expect((await quote('quoted', 'GET', '/paid', rich.apiKey)).headers.get('cache-control')).toBe('no-store');
      const [before] = await sql(stack.db.url, 'select credit_cents from orgs where id = $1', [rich.orgId]);
      expect(before).toEqual({ credit_cents: '100' });
      const [key] = await sql(stack.db.url, 'select spent_cents from api_keys where id = $1', [rich.keyId]);
      expect(key).toEqual({ spent_cents: '0' });
      const real = await call('quoted', 'GET', '/paid', rich.apiKey);
      expect(real.status, show(real)).toBe(200);
      expect(real.body.meta.price_cents_effective).toBe(5);
    });

    it('no credits: paid → payment_required like the gateway; free → allowed', async () => {
      const broke = await consumer(0);
      await expectRefusalLikeGateway(broke, '/paid', 402, 'payment_required');
      expect((await quote('quoted', 'GET', '/free', broke.apiKey)).body.data.admission).toEqual({ allowed: true });
      expect((await call('quoted', 'GET', '/free', broke.apiKey)).status).toBe(200);
    });

    it('a key without proxy:call, and the provider’s own key → forbidden like the gateway', async () => {
      const readOnly = await consumer(100, {}, { scopes: ['catalog:read'] });
      await expectRefusalLikeGateway(readOnly, '/paid', 403, 'forbidden');
      const own = await expectRefusalLikeGateway(provider, '/free', 403, 'forbidden');
      expect(own.details).toBeUndefined();
    });

    it('per-call max, lifetime budget and daily cap → the gateway’s 402 codes and details', async () => {
      await expectRefusalLikeGateway(
        await consumer(100, { per_call_max_cents: 4 }),
        '/paid',
        402,
        'per_call_limit_exceeded',
      );
      const budget = await expectRefusalLikeGateway(
        await consumer(100, { budget_cents: 4 }),
        '/paid',
        402,
        'insufficient_budget',
      );
      expect(budget.details).toEqual({ price_cents: 5, budget_cents: 4, spent_cents: 0, left_cents: 4 });
      await expectRefusalLikeGateway(await consumer(100, { daily_cap_cents: 4 }), '/paid', 402, 'daily_cap_exceeded');
    });

    it('counts spent budget and today’s spend: allowed until the next call would cross the cap', async () => {
      const capped = await consumer(100, { daily_cap_cents: 12 });
      for (let i = 0; i < 2; i++) {
        expect((await quote('quoted', 'GET', '/paid', capped.apiKey)).body.data.admission).toEqual({ allowed: true });
        expect((await call('quoted', 'GET', '/paid', capped.apiKey)).status).toBe(200);
      }
      // 10 spent today: 5 more would cross 12. Both say what is spent, what is left and when the cap resets.
      const refusal = await expectRefusalLikeGateway(capped, '/paid', 402, 'daily_cap_exceeded');
      const tomorrow = new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`);
      tomorrow.setUTCDate(tomorrow.getUTCDate() + 1);
      expect(refusal.details).toEqual({
        price_cents: 5,
        daily_cap_cents: 12,
        spent_cents: 10,
        left_cents: 2,
        resets_at: tomorrow.toISOString(),
      });
      expect((await quote('quoted', 'GET', '/items/special', capped.apiKey)).body.data.admission).toEqual({
        allowed: true,
      });
    });

    it('a parent key’s budget binds its child (insufficient_budget naming the parent)', async () => {
      const parent = await consumer(100, { budget_cents: 4 });
      const child = await createPerson(stack.services, { orgId: parent.orgId });
      await sql(stack.db.url, 'update api_keys set parent_key_id = $1 where id = $2', [parent.keyId, child.keyId]);
      const refusal = await expectRefusalLikeGateway(child, '/paid', 402, 'insufficient_budget');
      expect(refusal.details).toEqual({
        price_cents: 5,
        budget_cents: 4,
        key_id: parent.keyId,
        spent_cents: 0,
        left_cents: 4,
      });
    });

    it('approval mode: payment_required with the approval URL', async () => {
      const waiting = await consumer(100, { approval_mode: true });
      const refusal = await expectRefusalLikeGateway(waiting, '/paid', 402, 'payment_required');
      expect(refusal.details).toMatchObject({ reason: 'approval_required', approved_cents: 0 });
    });

    it('a suspended org and a card org at its credit limit → payment_required with the gateway’s reason', async () => {
      const suspended = await consumer(100);
      await sql(stack.db.url, 'update orgs set suspended = true where id = $1', [suspended.orgId]);
      const s = await expectRefusalLikeGateway(suspended, '/free', 402, 'payment_required');
      expect(s.details).toEqual({
        reason: 'suspended',
        price_cents: 0,
        billing_url: `${stack.config.urls.publicBase}/console/billing`,
      });
      const card = await consumer(0);
      await sql(stack.db.url, "update orgs set billing_mode = 'card', credit_limit_cents = 3 where id = $1", [
        card.orgId,
      ]);
      const c = await expectRefusalLikeGateway(card, '/paid', 402, 'payment_required');
      expect(c.details).toEqual({ price_cents: 5, reason: 'credit_limit_reached', spent_cents: 0, left_cents: 3 });
      expect((await quote('quoted', 'GET', '/items/special', card.apiKey)).body.data.admission).toEqual({
        allowed: true,
      });
    });

    it('required terms not accepted → 428 with the gateway’s details', async () => {
      const person = await consumer(100);
      const q = await quote('quoted-terms', 'GET', '/free', person.apiKey);
      const real = await call('quoted-terms', 'GET', '/free', person.apiKey);
      expectFailure(real, 428, 'terms_acceptance_required');
      expect(q.body.data.admission, show(q)).toEqual({
        allowed: false,
        error_code: 'terms_acceptance_required',
        status: 428,
        message: real.body.error.message,
        details: real.body.error.details,
      });
      expect(q.body.data.admission.details).toMatchObject({
        document_id: expect.any(String),
        content_hash: expect.any(String),
      });
    });

    it('a session gets the gateway’s answer to a session (401 in admission); a bad credential is 401', async () => {
      const person = await consumer(100);
      const q = await quote('quoted', 'GET', '/paid', person.session);
      expect(q.body.data.admission, show(q)).toMatchObject({
        allowed: false,
        error_code: 'unauthenticated',
        status: 401,
      });
      expectFailure(await call('quoted', 'GET', '/paid', person.session), 401, 'unauthenticated');
      expectFailure(await quote('quoted', 'GET', '/paid', `svc_live_${'0'.repeat(24)}`), 401, 'unauthenticated');
      expectFailure(await quote('quoted', 'GET', '/paid', 'garbage'), 401, 'unauthenticated');
    });
  });
  describe('stats after gateway calls', () => {
    it('paid, free and failed calls through the gateway show in /stats (computed live before any rollup)', async () => {
      const listing = await createPaidApi(stack.services, {
        provider,
        baseUrl: upstream.url,
        slug: 'stats-live',
        endpoints: [
          { method: 'GET', path: '/ok', priceCents: 3 },
          { method: 'GET', path: '/boom', priceCents: 2 },
        ],
      });
      upstream.handle((req, res) => {
        const failing = req.url?.startsWith('/boom') ?? false;
        res.writeHead(failing ? 500 : 200, { 'content-type': 'application/json' });
        res.end(failing ? '{"error":"down"}' : '{"ok":true}');
      });
      const a = await consumer(100);
      const b = await consumer(100);
      for (const [who, path, status] of [
        [a, '/ok', 200],
        [a, '/ok', 200],
        [b, '/ok', 200],
        [b, '/boom', 502],
      ] as const) {
        const res = await call(listing.slug, 'GET', path, who.apiKey);
        expect(res.status, show(res)).toBe(status);
      }
      // Usage reaches Postgres shortly after the answer (the gateway's group commit; failed calls asynchronously).
      let stats: { body: { data: Record<string, unknown> } } | undefined;
      for (let i = 0; i < 50; i++) {
        stats = await http(base, 'GET', `/v1/apis/${listing.slug}/stats?window=24h`);
        if (stats.body.data.calls === 4) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(stats!.body.data).toMatchObject({
        calls: 4,
        successes: 3,
        success_rate: 0.75,
        gmv_cents: 9,
        unique_consumers: 2,
        errors: { upstream_5xx: 1 },
        source: 'live',
      });
      upstream.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    });
  });
});
