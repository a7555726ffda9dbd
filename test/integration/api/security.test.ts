// Every control-plane route, checked for authentication, scope, ownership and mass assignment.
// ROUTES must list each route the routers register: a new route without a row here fails the first test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRouters, createApiApp } from '../../../api/app.js';
import { CONSUMER_SCOPES, SCOPES, type Scope } from '../../../core/auth/scopes.js';
import { newId } from '../../../core/ids.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { Org, User } from '../../../db/entities/index.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, serve, describe as show, type HttpResult } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

type Need = 'none' | 'auth' | 'session' | Scope;
interface RouteCase {
  method: string;
  path: string;
  need: Need;
  /** A concrete path and a valid body, to show the request gets past validation once authorised. */
  example?: { path?: string; body?: unknown };
}

const ROUTES: RouteCase[] = [
  { method: 'GET', path: '/', need: 'none' },
  { method: 'GET', path: '/docs/:file', need: 'none' },
  // The storefront (issue 31): public pages and files.
  { method: 'GET', path: '/catalog', need: 'none' },
  { method: 'GET', path: '/apis', need: 'none' },
  { method: 'GET', path: '/apis/:slug', need: 'none' },
  { method: 'GET', path: '/apis/:slug/quote', need: 'none' },
  { method: 'GET', path: '/providers/:slug', need: 'none' },
  { method: 'GET', path: '/categories/:category', need: 'none' },
  { method: 'GET', path: '/leaderboards', need: 'none' },
  { method: 'GET', path: '/leaderboards/:board', need: 'none' },
  { method: 'GET', path: '/market', need: 'none' },
  { method: 'GET', path: '/sitemap.xml', need: 'none' },
  { method: 'GET', path: '/robots.txt', need: 'none' },
  { method: 'GET', path: '/llms.txt', need: 'none' },
  { method: 'GET', path: '/health', need: 'none' },
  { method: 'POST', path: '/v1/register', need: 'none' },
  { method: 'POST', path: '/v1/signup', need: 'none' },
  { method: 'POST', path: '/v1/auth/signup', need: 'none' },
  { method: 'POST', path: '/v1/auth/verify-email', need: 'none' },
  { method: 'POST', path: '/v1/auth/login/request', need: 'none' },
  { method: 'POST', path: '/v1/auth/login/verify', need: 'none' },
  { method: 'POST', path: '/v1/auth/logout', need: 'session' },
  { method: 'GET', path: '/v1/me', need: 'auth' },
  { method: 'POST', path: '/v1/me/email', need: 'auth' },
  { method: 'GET', path: '/v1/me/profile', need: 'auth' },
  { method: 'PATCH', path: '/v1/me/profile', need: 'provider:write', example: { body: { bio: 'hello' } } },
  { method: 'POST', path: '/v1/me/avatar', need: 'provider:write' },
  { method: 'GET', path: '/v1/avatars/:file', need: 'none' },
  { method: 'GET', path: '/v1/keys', need: 'auth' },
  { method: 'POST', path: '/v1/keys', need: 'keys:write', example: { body: { name: 'k' } } },
  { method: 'PATCH', path: '/v1/keys/:id', need: 'keys:write', example: { body: { budget_cents: 1 } } },
  { method: 'DELETE', path: '/v1/keys/:id', need: 'keys:write' },
  { method: 'POST', path: '/v1/keys/:id/approvals', need: 'keys:write' },
  { method: 'GET', path: '/v1/usage', need: 'usage:read' },
  { method: 'GET', path: '/v1/provider/apis', need: 'provider:write' },
  { method: 'POST', path: '/v1/provider/apis', need: 'provider:write' },
  { method: 'GET', path: '/v1/provider/apis/:api_id', need: 'provider:write' },
  { method: 'PATCH', path: '/v1/provider/apis/:api_id', need: 'provider:write' },
  { method: 'PUT', path: '/v1/provider/apis/:api_id/credentials', need: 'provider:write' },
  { method: 'POST', path: '/v1/provider/apis/:api_id/verify', need: 'provider:write' },
  { method: 'POST', path: '/v1/provider/apis/:api_id/publish', need: 'provider:write' },
  { method: 'POST', path: '/v1/provider/apis/:api_id/unpublish', need: 'provider:write' },
  { method: 'PATCH', path: '/v1/provider/apis/:api_id/pricing', need: 'provider:write' },
  { method: 'DELETE', path: '/v1/provider/apis/:api_id/endpoints/:endpoint_id/pending-price', need: 'provider:write' },
  { method: 'POST', path: '/v1/provider/apis/:api_id/terms/accept', need: 'provider:write' },
  { method: 'DELETE', path: '/v1/provider/apis/:api_id', need: 'provider:write' },
  { method: 'POST', path: '/v1/provider/apis/:api_id/endpoints', need: 'provider:write' },
  { method: 'PATCH', path: '/v1/provider/apis/:api_id/endpoints/:endpoint_id', need: 'provider:write' },
  { method: 'DELETE', path: '/v1/provider/apis/:api_id/endpoints/:endpoint_id', need: 'provider:write' },
  { method: 'POST', path: '/v1/provider/apis/:api_id/import', need: 'provider:write' },
  { method: 'GET', path: '/v1/provider/apis/:api_id/revision', need: 'provider:write' },
  { method: 'DELETE', path: '/v1/provider/apis/:api_id/revision', need: 'provider:write' },
  { method: 'POST', path: '/v1/provider/apis/:api_id/archive', need: 'provider:write' },
  { method: 'POST', path: '/v1/provider/apis/:api_id/restore', need: 'provider:write' },
  { method: 'GET', path: '/v1/provider/documents', need: 'provider:write', example: {} },
  { method: 'POST', path: '/v1/provider/documents', need: 'provider:write' },
  { method: 'POST', path: '/v1/provider/documents/:document_id/activate', need: 'provider:write' },
  { method: 'GET', path: '/v1/provider/analytics', need: 'provider:write', example: {} },
  { method: 'POST', path: '/v1/provider/connect/onboard', need: 'provider:write' },
  { method: 'GET', path: '/v1/apis/:slug', need: 'none' },
  { method: 'GET', path: '/v1/apis/:slug/terms', need: 'none' },
  { method: 'GET', path: '/v1/apis/:slug/endpoints', need: 'none' },
  { method: 'GET', path: '/v1/apis/:slug/schema', need: 'none' },
  { method: 'GET', path: '/v1/apis/:slug/openapi', need: 'none' },
  { method: 'GET', path: '/v1/apis/:slug/stats', need: 'none' },
  { method: 'GET', path: '/v1/apis/:slug/history', need: 'none' },
  { method: 'GET', path: '/v1/apis/:slug/ranks', need: 'none' },
  { method: 'GET', path: '/v1/apis/:slug/quote', need: 'none' },
  { method: 'GET', path: '/v1/categories', need: 'none' },
  { method: 'GET', path: '/v1/search', need: 'none' },
  { method: 'POST', path: '/v1/apis/:slug/terms/accept', need: 'session' },
  { method: 'GET', path: '/v1/providers', need: 'none' },
  { method: 'GET', path: '/v1/providers/:slug', need: 'none' },
  { method: 'GET', path: '/v1/documents/:document_id/snapshot', need: 'none' },
  { method: 'GET', path: '/v1/leaderboards/:board', need: 'none' },
  { method: 'GET', path: '/v1/market/overview', need: 'none' },
  { method: 'GET', path: '/v1/market/activity', need: 'auth', example: {} },
  { method: 'POST', path: '/v1/api-requests', need: 'auth', example: { body: { query: 'tide tables for harbours' } } },
  { method: 'GET', path: '/v1/api-requests', need: 'none' },
  { method: 'GET', path: '/terms/:slug', need: 'none' },
  { method: 'GET', path: '/approve/:keyId', need: 'none' },
  { method: 'POST', path: '/approve/:keyId', need: 'none' },
  { method: 'POST', path: '/terms/:slug', need: 'none' },
  { method: 'GET', path: '/connect/return', need: 'none' },
  { method: 'GET', path: '/connect/refresh', need: 'none' },
  { method: 'GET', path: '/v1/billing/balance', need: 'auth' },
  { method: 'GET', path: '/v1/billing/packs', need: 'auth' },
  { method: 'POST', path: '/v1/billing/checkout', need: 'billing:write' },
  { method: 'POST', path: '/v1/billing/setup-intent', need: 'billing:write' },
  { method: 'POST', path: '/v1/billing/portal', need: 'billing:write' },
  { method: 'POST', path: '/v1/billing/auto-reload', need: 'billing:write' },
  { method: 'POST', path: '/v1/webhooks/stripe', need: 'none' },
  { method: 'GET', path: '/billing/return', need: 'none' },
  // Embedded payments' test pages: 404 unless payments run on stripe-mock; their links are signed.
  { method: 'GET', path: '/embedded-payments/checkout/:paymentId', need: 'none' },
  { method: 'POST', path: '/embedded-payments/checkout/:paymentId', need: 'none' },
  { method: 'GET', path: '/embedded-payments/setup/:orgId', need: 'none' },
  { method: 'POST', path: '/embedded-payments/setup/:orgId', need: 'none' },
  { method: 'GET', path: '/console', need: 'none' },
  { method: 'GET', path: '/console/keys', need: 'none' },
  { method: 'GET', path: '/console/usage', need: 'none' },
  { method: 'GET', path: '/console/billing', need: 'none' },
  { method: 'GET', path: '/console/catalog', need: 'none' },
  { method: 'GET', path: '/console/provider', need: 'none' },
  { method: 'GET', path: '/console/catalog/categories/:category', need: 'none' },
  { method: 'GET', path: '/console/catalog/leaderboards', need: 'none' },
  { method: 'GET', path: '/console/catalog/leaderboards/:board', need: 'none' },
  { method: 'GET', path: '/console/catalog/apis/:slug', need: 'none' },
  { method: 'GET', path: '/console/catalog/apis/:slug/quote', need: 'none' },
  { method: 'POST', path: '/console/catalog/requests', need: 'none' },
  { method: 'POST', path: '/console/provider/apis', need: 'none' },
  { method: 'GET', path: '/console/provider/apis/:id', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id/credentials', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id/pricing', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id/endpoints/:endpoint_id/cancel-price', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id/verify', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id/publish', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id/unpublish', need: 'none' },
  { method: 'GET', path: '/console/provider/apis/:id/endpoints/new', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id/endpoints', need: 'none' },
  { method: 'GET', path: '/console/provider/apis/:id/endpoints/:endpoint_id', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id/endpoints/:endpoint_id', need: 'none' },
  { method: 'GET', path: '/console/provider/apis/:id/endpoints/:endpoint_id/remove', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id/endpoints/:endpoint_id/remove', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id/import', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id/revision/publish', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id/revision/discard', need: 'none' },
  { method: 'GET', path: '/console/provider/apis/:id/archive', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id/archive', need: 'none' },
  { method: 'GET', path: '/console/provider/apis/:id/delete', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id/delete', need: 'none' },
  { method: 'POST', path: '/console/provider/apis/:id/restore', need: 'none' },
  { method: 'GET', path: '/console/provider/documents', need: 'none' },
  { method: 'POST', path: '/console/provider/documents', need: 'none' },
  { method: 'POST', path: '/console/provider/documents/:document_id/activate', need: 'none' },
  { method: 'GET', path: '/console/provider/analytics', need: 'none' },
  { method: 'GET', path: '/console/provider/requests', need: 'none' },
  { method: 'POST', path: '/console/provider/connect', need: 'none' },
  { method: 'POST', path: '/console/keys', need: 'none' },
  { method: 'POST', path: '/console/keys/:id/caps', need: 'none' },
  { method: 'POST', path: '/console/keys/:id/approve', need: 'none' },
  { method: 'GET', path: '/console/keys/:id/revoke', need: 'none' },
  { method: 'POST', path: '/console/keys/:id/revoke', need: 'none' },
  { method: 'GET', path: '/console/usage.csv', need: 'none' },
  { method: 'POST', path: '/console/billing/checkout', need: 'none' },
  { method: 'POST', path: '/console/billing/card', need: 'none' },
  { method: 'POST', path: '/console/billing/portal', need: 'none' },
  { method: 'POST', path: '/console/billing/auto-reload', need: 'none' },
  { method: 'GET', path: '/login', need: 'none' },
  { method: 'POST', path: '/login', need: 'none' },
  { method: 'POST', path: '/login/verify', need: 'none' },
  { method: 'POST', path: '/logout', need: 'none' },
  { method: 'GET', path: '/signup', need: 'none' },
  { method: 'POST', path: '/signup', need: 'none' },
  { method: 'POST', path: '/signup/verify', need: 'none' },
  { method: 'GET', path: '/verify-email', need: 'none' },
  { method: 'POST', path: '/verify-email', need: 'none' },
  { method: 'GET', path: '/api-requests/confirm', need: 'none' },
  { method: 'POST', path: '/api-requests/confirm', need: 'none' },
  { method: 'GET', path: '/.well-known/openid-configuration', need: 'none' },
  { method: 'GET', path: '/.well-known/oauth-authorization-server', need: 'none' },
  { method: 'GET', path: '/oauth/authorize', need: 'none' },
  { method: 'POST', path: '/oauth/authorize', need: 'none' },
  { method: 'GET', path: '/oauth/authorize/:uid', need: 'none' },
  { method: 'POST', path: '/oauth/token', need: 'none' },
  { method: 'POST', path: '/oauth/register', need: 'none' },
  { method: 'POST', path: '/oauth/revoke', need: 'none' },
  { method: 'GET', path: '/oauth/jwks', need: 'none' },
  { method: 'OPTIONS', path: '/.well-known/openid-configuration', need: 'none' },
  { method: 'OPTIONS', path: '/.well-known/oauth-authorization-server', need: 'none' },
  { method: 'OPTIONS', path: '/oauth/token', need: 'none' },
  { method: 'OPTIONS', path: '/oauth/register', need: 'none' },
  { method: 'OPTIONS', path: '/oauth/revoke', need: 'none' },
  { method: 'OPTIONS', path: '/oauth/jwks', need: 'none' },
  { method: 'GET', path: '/oauth/interaction/:uid', need: 'none' },
  { method: 'POST', path: '/oauth/interaction/:uid/email', need: 'none' },
  { method: 'POST', path: '/oauth/interaction/:uid/code', need: 'none' },
  { method: 'POST', path: '/oauth/interaction/:uid/consent', need: 'none' },
  { method: 'GET', path: '/v1/openapi.json', need: 'none' },
  { method: 'GET', path: '/docs', need: 'none' },
  { method: 'GET', path: '/docs/assets/:file', need: 'none' },
];

const concrete = (path: string, keyId: string) =>
  path
    .replace(':id', keyId)
    .replace(':file', 'avt_00000000000000000000000000.png')
    .replace(':api_id', 'api_00000000000000000000000000')
    .replace(':endpoint_id', 'ep_00000000000000000000000000')
    .replace(':document_id', 'doc_00000000000000000000000000')
    .replace(':slug', 'no-such-api');

describe('security: every route', () => {
  let stack: TestStack;
  let server: RunningHttpServer;
  let base: string;
  let orgA: string;
  let fullKeyA: string; // all scopes
  let fullKeyB: string; // another org, all scopes
  let keyOfA: string; // a key id in org A
  let sessionA: string;
  const keyLacking = new Map<Scope, string>(); // org A keys lacking one scope each

  beforeAll(async () => {
    stack = await createTestStack({ env: { STRIPE_WEBHOOK_SECRET: 'whsec_security_test' } });
    server = await serve(createApiApp(stack.services).callback());
    base = server.url;
    const em = stack.services.orm.em.fork();
    const a = em.create(Org, { id: newId('org'), kind: 'standard' });
    const b = em.create(Org, { id: newId('org'), kind: 'standard' });
    const user = em.create(User, {
      id: newId('user'),
      org: a,
      email: 'owner-a@example.com',
      role: 'owner',
      emailVerifiedAt: new Date(),
    });
    const mk = (orgId: string, scopes: readonly Scope[]) =>
      stack.services.keys.create(em, { orgId, name: 'k', scopes, source: 'api' });
    const full = mk(a.id, SCOPES);
    fullKeyA = full.plaintext;
    keyOfA = full.key.id;
    fullKeyB = mk(b.id, SCOPES).plaintext;
    for (const scope of SCOPES)
      keyLacking.set(
        scope,
        mk(
          a.id,
          SCOPES.filter((s) => s !== scope),
        ).plaintext,
      );
    sessionA = stack.services.sessions.create(em, { userId: user.id, orgId: a.id }).token;
    orgA = a.id;
    await em.flush();
  });
  afterAll(async () => {
    await server.close();
    await stack.close();
  });

  it('the table lists exactly the routes the control plane registers', () => {
    const registered = new Set<string>();
    for (const router of apiRouters(stack.services)) {
      for (const layer of router.stack) {
        for (const method of layer.methods) if (method !== 'HEAD') registered.add(`${method} ${String(layer.path)}`);
      }
    }
    expect([...registered].sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  });

  const authed = ROUTES.filter((r) => r.need !== 'none');

  it.each(authed)(
    '$method $path: 401 without a bearer, with a malformed one and with an unknown key',
    async (route) => {
      const path = concrete(route.path, keyOfA);
      expectFailure(await http(base, route.method, path, { body: route.example?.body }), 401, 'unauthenticated');
      expectFailure(
        await http(base, route.method, path, { token: 'svc_live_short', body: route.example?.body }),
        401,
        'unauthenticated',
      );
      expectFailure(
        await http(base, route.method, path, { token: `svc_live_${'0'.repeat(24)}`, body: route.example?.body }),
        401,
        'unauthenticated',
      );
    },
  );

  const scoped = ROUTES.filter((r): r is RouteCase & { need: Scope } => (SCOPES as readonly string[]).includes(r.need));

  it.each(scoped)('$method $path: 403 naming $need for a key without it', async (route) => {
    const res = await http(base, route.method, concrete(route.path, keyOfA), {
      token: keyLacking.get(route.need),
      body: route.example?.body,
    });
    expectFailure(res, 403, 'forbidden');
    expect(res.body.error.details).toEqual({ missing_scope: route.need });
  });

  it.each(ROUTES.filter((r) => r.need === 'session'))(
    '$method $path: 403 for an API key (session only)',
    async (route) => {
      expectFailure(await http(base, route.method, route.path, { token: fullKeyA }), 403, 'forbidden');
    },
  );

  it.each(authed.filter((r) => r.example))('$method $path: passes with the right credential', async (route) => {
    const res = await http(base, route.method, concrete(route.example?.path ?? route.path, keyOfA), {
      token: sessionA,
      body: route.example?.body,
    });
    expect(res.status, show(res)).toBeLessThan(300);
  });

  it('answers 404 for another org’s key, and changes nothing', async () => {
    expectFailure(
      await http(base, 'PATCH', `/v1/keys/${keyOfA}`, { token: fullKeyB, body: { budget_cents: 5 } }),
      404,
      'not_found',
    );
    expectFailure(await http(base, 'DELETE', `/v1/keys/${keyOfA}`, { token: fullKeyB }), 404, 'not_found');
    const [row] = await sql(stack.db.url, 'select revoked_at from api_keys where id = $1', [keyOfA]);
    expect(row).toEqual({ revoked_at: null });
  });

  it('refuses forbidden and unknown fields with 400 and changes nothing', async () => {
    const snapshot = async () =>
      JSON.stringify(
        await sql(stack.db.url, 'select id, credit_cents, billing_mode, suspended from orgs order by id'),
      ) +
      JSON.stringify(
        await sql(stack.db.url, 'select id, org_id, scopes, budget_cents, revoked_at from api_keys order by id'),
      ) +
      JSON.stringify(await sql(stack.db.url, 'select * from profiles order by org_id'));
    const before = await snapshot();
    const attempts: [string, string, unknown][] = [
      ['POST', '/v1/register', { credit_cents: 1_000_000 }],
      ['POST', '/v1/signup', { email: 'new@example.com', credit_cents: 100 }],
      ['POST', '/v1/signup', { email: 'new@example.com', org_id: orgA }],
      ['POST', '/v1/keys', { name: 'x', org_id: 'org_other' }],
      ['POST', '/v1/keys', { name: 'x', credit_cents: 5 }],
      ['PATCH', `/v1/keys/${keyOfA}`, { scopes: ['billing:write'] }],
      ['PATCH', `/v1/keys/${keyOfA}`, { org_id: 'org_other' }],
      ['PATCH', `/v1/keys/${keyOfA}`, { budget_cents: 5, revoked_at: null }],
      ['PATCH', '/v1/me/profile', { credit_cents: 100 }],
      ['PATCH', '/v1/me/profile', { org_id: 'org_other' }],
      ['PATCH', '/v1/me/profile', { scopes: ['provider:write'] }],
      ['PATCH', '/v1/me/profile', { bio: 'ok', suspended: false }],
    ];
    for (const [method, path, body] of attempts) {
      expectFailure(await http(base, method, path, { token: fullKeyA, body }), 400, 'validation_failed');
    }
    expect(await snapshot()).toBe(before);
  });

  it('answers malformed bodies on every JSON route with a 4xx, never a 500', async () => {
    const bodies = [
      '[]',
      '"text"',
      'null',
      '42',
      '{"a":{"b":{"c":[1,2,{"d":null}]}}}',
      `{"name":"${'x'.repeat(10_000)}"}`,
      '{"email":["a@b.c"]}',
      '\u0000',
    ];
    const jsonRoutes = ROUTES.filter((r) => ['POST', 'PATCH'].includes(r.method) && r.path.startsWith('/v1/'));
    for (const route of jsonRoutes) {
      for (const raw of bodies) {
        const res = await http(base, route.method, concrete(route.path, keyOfA), {
          token: sessionA,
          rawBody: raw,
          headers: { 'content-type': 'application/json' },
        });
        expect(res.status, `${route.method} ${route.path} ${raw.slice(0, 30)} -> ${show(res)}`).toBeGreaterThanOrEqual(
          400,
        );
        expect(res.status, `${route.method} ${route.path} ${raw.slice(0, 30)} -> ${show(res)}`).toBeLessThan(500);
      }
    }
  });

  // The input rule (core/input.ts) runs before routing and auth: NUL or a lone surrogate anywhere is a 400.
  const expectBadText = (res: HttpResult) => {
    expectFailure(res, 400, 'validation_failed');
    expect(res.body.error.message, show(res)).toMatch(/must not contain NUL characters or unpaired UTF-16 surrogates/);
  };
  // A path with its first parameter (or, without one, its last segment) carrying an escaped NUL.
  const withNul = (path: string) => concrete(/:\w+/.test(path) ? path.replace(/:\w+/, 'a%00') : `${path}%00`, keyOfA);

  it.each(ROUTES)('$method $path: NUL in the path is 400 validation_failed', async (route) => {
    expectBadText(await http(base, route.method, withNul(route.path), { token: sessionA, body: route.example?.body }));
  });

  it.each(ROUTES)('$method $path: NUL in a query value or name is 400 validation_failed', async (route) => {
    const path = concrete(route.example?.path ?? route.path, keyOfA);
    for (const query of ['?q=%00', '?limit=1&q=a%00b', '?a%00=1']) {
      expectBadText(await http(base, route.method, path + query, { token: sessionA, body: route.example?.body }));
    }
  });

  // GET and DELETE bodies are never read; every other method's JSON body is checked before the route runs.
  it.each(ROUTES.filter((r) => ['POST', 'PUT', 'PATCH'].includes(r.method)))(
    '$method $path: NUL or a lone surrogate in a JSON string is 400 validation_failed',
    async (route) => {
      const path = concrete(route.example?.path ?? route.path, keyOfA);
      for (const rawBody of ['{"name":"a\\u0000"}', '{"a":{"b":["ok","\\ud800"]}}', '{"x\\u0000":1}']) {
        expectBadText(
          await http(base, route.method, path, {
            token: sessionA,
            rawBody,
            headers: { 'content-type': 'application/json' },
          }),
        );
      }
    },
  );

  it('page forms refuse a missing or mismatched CSRF token', async () => {
    for (const path of [
      '/login',
      '/login/verify',
      '/signup',
      '/signup/verify',
      '/verify-email',
      '/api-requests/confirm',
      '/logout',
      '/terms/no-such-api',
    ]) {
      const res = await http(base, 'POST', path, {
        rawBody: 'email=a%40example.com&code=123456&token=abc&csrf=forged',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'svc_csrf=' + 'A'.repeat(32) },
      });
      expect(res.status, path).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
    }
    expect(CONSUMER_SCOPES.length).toBe(4);
  });
});
