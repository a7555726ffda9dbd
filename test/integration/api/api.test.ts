// The control plane in-process against real Postgres and Redis: the registration slice and the envelope contract.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { sql } from '../../helpers/db.js';
import { describe as show, expectFailure, http, serve } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

describe('control plane', () => {
  let stack: TestStack;
  let server: RunningHttpServer;
  let base: string;

  beforeAll(async () => {
    stack = await createTestStack({ env: { REGISTER_RATE_LIMIT_PER_HOUR: '1000' } });
    server = await serve(createApiApp(stack.services).callback());
    base = server.url;
  });
  afterAll(async () => {
    // Every money test file ends with the books consistent (each org's cached balance = its ledger sum).
    expect(await stack.services.ledger.findDrift()).toEqual([]);
    await server.close();
    await stack.close();
  });

  describe('POST /v1/register', () => {
    it('returns 201 with org_id, a svc_live_ key and 0 credits, echoed in X-Svc-Key', async () => {
      const res = await http(base, 'POST', '/v1/register');
      expect(res.status, show(res)).toBe(201);
      expect(Object.keys(res.body.data).sort()).toEqual(['api_key', 'credit_cents', 'org_id']);
      expect(res.body.data.org_id).toMatch(/^org_[0-9a-z]{26}$/);
      expect(res.body.data.api_key).toMatch(/^svc_live_[0-9A-Za-z]{24}$/);
      expect(res.body.data.credit_cents).toBe(0);
      expect(res.headers.get('x-svc-key')).toBe(res.body.data.api_key);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.body.meta.request_id).toBe(res.headers.get('x-request-id'));
    });

    it('gives the key consumer scopes only, and a distinct org each time', async () => {
      const one = await http(base, 'POST', '/v1/register');
      const two = await http(base, 'POST', '/v1/register', { body: {} });
      expect(two.status, show(two)).toBe(201);
      expect(one.body.data.org_id).not.toBe(two.body.data.org_id);
      const me = await http(base, 'GET', '/v1/me', { token: one.body.data.api_key });
      expect(me.body.data.scopes).toEqual(['catalog:read', 'proxy:call', 'keys:write', 'usage:read']);
    });

    it('refuses a body with fields (nothing can be set at registration)', async () => {
      const res = await http(base, 'POST', '/v1/register', { body: { credit_cents: 1000, org_id: 'org_mine' } });
      expectFailure(res, 400, 'validation_failed');
      expect(res.body.error.message).toMatch(/Unrecognized keys/i);
    });

    it('refuses invalid JSON with 400, not 500', async () => {
      const res = await http(base, 'POST', '/v1/register', {
        rawBody: '{"bad',
        headers: { 'content-type': 'application/json' },
      });
      expectFailure(res, 400, 'validation_failed');
      expect(res.body.error.message).toBe('Request body is not valid JSON.');
    });

    it('refuses a non-JSON body with 415', async () => {
      const res = await http(base, 'POST', '/v1/register', {
        rawBody: 'hello',
        headers: { 'content-type': 'text/plain' },
      });
      expectFailure(res, 415, 'unsupported_media_type');
    });

    it('refuses a body over the 1 MB limit with 413 validation_failed', async () => {
      const res = await http(base, 'POST', '/v1/register', {
        rawBody: JSON.stringify({ pad: 'x'.repeat(1_100_000) }),
        headers: { 'content-type': 'application/json' },
      });
      expectFailure(res, 413, 'validation_failed');
    });
  });

  describe('GET /v1/me', () => {
    it('returns the org, its credits and the caller scopes', async () => {
      const reg = await http(base, 'POST', '/v1/register');
      const res = await http(base, 'GET', '/v1/me', { token: reg.body.data.api_key });
      expect(res.status, show(res)).toBe(200);
      expect(res.body.data).toEqual({
        org_id: reg.body.data.org_id,
        org: {
          org_id: reg.body.data.org_id,
          kind: 'ephemeral',
          name: null,
          billing_mode: 'prepaid',
          suspended: false,
          created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        },
        credit_cents: 0,
        withheld_credit_cents: 0,
        scopes: ['catalog:read', 'proxy:call', 'keys:write', 'usage:read'],
        user: null,
        credential: {
          type: 'api_key',
          key_id: expect.stringMatching(/^key_/),
          key_prefix: reg.body.data.api_key.slice(0, 17),
        },
      });
    });

    it.each([
      ['no Authorization header', undefined],
      ['a non-bearer scheme', 'Basic dXNlcjpwYXNz'],
      ['a malformed key', 'Bearer svc_live_tooshort'],
      ['an unknown key', `Bearer svc_live_${'Z'.repeat(24)}`],
      ['an unknown session', `Bearer sess_${'a'.repeat(32)}`],
    ])('answers 401 unauthenticated for %s', async (_label, authorization) => {
      const res = await http(base, 'GET', '/v1/me', { headers: authorization ? { authorization } : {} });
      expectFailure(res, 401, 'unauthenticated');
    });
  });

  describe('envelope and routing', () => {
    it('answers unknown routes with a 404 envelope', async () => {
      expectFailure(await http(base, 'GET', '/v1/nope'), 404, 'not_found');
      expectFailure(await http(base, 'POST', '/nothing/here'), 404, 'not_found');
      // `/` is the home page: another method is 405, not 404.
      expectFailure(await http(base, 'POST', '/'), 405, 'method_not_allowed');
    });

    it('answers a wrong method with 405 and Allow', async () => {
      const res = await http(base, 'DELETE', '/v1/register');
      expectFailure(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow')).toBe('POST');
    });

    it('keeps a well-formed incoming X-Request-Id and replaces a bad one', async () => {
      const kept = await http(base, 'GET', '/v1/me', { headers: { 'x-request-id': 'trace-abc-12345' } });
      expect(kept.headers.get('x-request-id')).toBe('trace-abc-12345');
      expect(kept.body.meta.request_id).toBe('trace-abc-12345');
      const replaced = await http(base, 'GET', '/v1/me', { headers: { 'x-request-id': 'bad id!' } });
      expect(replaced.body.meta.request_id).toMatch(/^req_/);
    });

    it('serves /health with db, counters and temporal up or down (temporal down here: 503 envelope naming it)', async () => {
      const res = await http(base, 'GET', '/health');
      expectFailure(res, 503, 'internal_error');
      expect(res.body.error.details.checks).toEqual({
        db: { status: 'up' },
        counters: { status: 'up' },
        temporal: { status: 'down' },
      });
    });

    it('logs a 500 with its stack and masks it in the response', async () => {
      // Break the database under the app: the handler's query fails with a raw driver error.
      const reg = await http(base, 'POST', '/v1/register');
      await sql(stack.db.url, 'alter table orgs rename to orgs_moved');
      try {
        const res = await http(base, 'GET', '/v1/me', { token: reg.body.data.api_key });
        expectFailure(res, 500, 'internal_error');
        expect(res.body.error.message).toBe('An unexpected error occurred.');
        expect(res.text).not.toMatch(/orgs|relation|select/i);
        expect(stack.logs.text()).toContain(res.body.meta.request_id);
        expect(stack.logs.text()).toMatch(/relation .*orgs.* does not exist/);
      } finally {
        await sql(stack.db.url, 'alter table orgs_moved rename to orgs');
      }
    });
  });
});

describe('registration rate limit', () => {
  it('answers 429 rate_limited with Retry-After once an address exceeds the hourly limit', async () => {
    const stack = await createTestStack({ env: { REGISTER_RATE_LIMIT_PER_HOUR: '3' } });
    const server = await serve(createApiApp(stack.services).callback());
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await http(server.url, 'POST', '/v1/register')).status);
      expect(statuses).toEqual([201, 201, 201, 429]);
      const res = await http(server.url, 'POST', '/v1/register');
      expect(res.body.error.code).toBe('rate_limited');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(3000);
      const [row] = await sql<{ count: string }>(stack.db.url, 'select count(*) from orgs');
      expect(row?.count).toBe('3');
    } finally {
      await server.close();
      await stack.close();
    }
  });
});
