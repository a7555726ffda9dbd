// API keys through the control plane: create, list, cap, revoke; revocation reaches another process within 1 s.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { sql } from '../../helpers/db.js';
import { REDIS_URL } from '../../helpers/env.js';
import { expectFailure, http, serve, describe as show } from '../../helpers/http.js';
import { startProcess, type RunningProcess } from '../../helpers/processes.js';
import { createTestStack, NO_TEMPORAL, type TestStack } from '../../helpers/services.js';

describe('keys', () => {
  let stack: TestStack;
  let server: RunningHttpServer;
  let base: string;
  let owner: { org_id: string; api_key: string };
  const plaintexts: string[] = [];

  beforeAll(async () => {
    stack = await createTestStack();
    server = await serve(createApiApp(stack.services).callback());
    base = server.url;
    owner = await stack.services.accounts.register({ ip: '10.1.0.1' });
    plaintexts.push(owner.api_key);
  });
  afterAll(async () => {
    // Every money test file ends with the books consistent (each org's cached balance = its ledger sum).
    expect(await stack.services.ledger.findDrift()).toEqual([]);
    await server.close();
    await stack.close();
  });

  async function create(body: Record<string, unknown>, token = owner.api_key) {
    const res = await http(base, 'POST', '/v1/keys', { token, body });
    if (res.status === 201) plaintexts.push(res.body.data.api_key as string);
    return res;
  }

  it('creates a key: 201 with id and the plaintext once, scopes defaulting to the creator’s', async () => {
    const res = await create({ name: 'ci', budget_cents: 500 });
    expect(res.status, show(res)).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^key_/),
      api_key: expect.stringMatching(/^svc_live_[0-9A-Za-z]{24}$/),
      name: 'ci',
      keyPrefix: res.body.data.api_key.slice(0, 17),
      scopes: ['catalog:read', 'proxy:call', 'keys:write', 'usage:read'],
      source: 'api',
      parent_key_id: (await http(base, 'GET', '/v1/me', { token: owner.api_key })).body.data.credential.key_id,
      budget_cents: 500,
      per_call_max_cents: null,
      daily_cap_cents: null,
      approval_mode: false,
      approved_cents: 0,
      remaining_approval_cents: null,
      spent_cents: 0,
      spent_today_cents: 0,
      remaining_budget_cents: 500,
      created_at: expect.any(String),
      last_used_at: null,
      revoked_at: null,
    });
    const me = await http(base, 'GET', '/v1/me', { token: res.body.data.api_key });
    expect(me.body.data.org_id).toBe(owner.org_id);
  });

  it('limits scopes to the creator’s, and validates the body', async () => {
    const narrow = await create({ name: 'reader', scopes: ['catalog:read'] });
    expect(narrow.body.data.scopes).toEqual(['catalog:read']);
    const wider = await create({ name: 'x', scopes: ['billing:write'] });
    expectFailure(wider, 403, 'forbidden');
    expect(wider.body.error.details).toEqual({ scopes_not_held: ['billing:write'] });
    // A key without keys:write cannot create keys at all.
    expectFailure(await create({ name: 'y' }, narrow.body.data.api_key), 403, 'forbidden');
    for (const body of [
      {},
      { name: '' },
      { name: 'x', scopes: ['root'] },
      { name: 'x', scopes: ['catalog:read', 'catalog:read'] },
      { name: 'x', budget_cents: -1 },
      { name: 'x', budget_cents: 1.5 },
      { name: 'x', budget_cents: '5' },
      { name: 'x', org_id: 'org_other' },
    ]) {
      expectFailure(await create(body), 400, 'validation_failed');
    }
  });

  it('lists keys with caps and spend, newest last, paginated, without any plaintext', async () => {
    const res = await http(base, 'GET', '/v1/keys?limit=2', { token: owner.api_key });
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data).toHaveLength(2);
    expect(res.body.meta.pagination).toMatchObject({ limit: 2, offset: 0, has_more: true });
    for (const k of res.body.data) {
      expect(Object.keys(k)).toEqual(
        expect.arrayContaining([
          'id',
          'keyPrefix',
          'scopes',
          'budget_cents',
          'per_call_max_cents',
          'daily_cap_cents',
          'spent_cents',
          'spent_today_cents',
        ]),
      );
      expect(k).not.toHaveProperty('api_key');
    }
    const all = await http(base, 'GET', `/v1/keys?offset=0&limit=200`, { token: owner.api_key });
    for (const p of plaintexts) expect(all.text).not.toContain(p.slice(17));
    expectFailure(await http(base, 'GET', '/v1/keys?limit=0', { token: owner.api_key }), 400, 'validation_failed');
    expectFailure(await http(base, 'GET', '/v1/keys?bogus=1', { token: owner.api_key }), 400, 'validation_failed');
  });

  it('patches caps (integers or null) and approval mode; refuses anything else', async () => {
    const key = (await create({ name: 'capped' })).body.data;
    const res = await http(base, 'PATCH', `/v1/keys/${key.id}`, {
      token: owner.api_key,
      body: { budget_cents: 37, per_call_max_cents: 5, daily_cap_cents: 20, approval_mode: true },
    });
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data).toMatchObject({
      budget_cents: 37,
      per_call_max_cents: 5,
      daily_cap_cents: 20,
      approval_mode: true,
      remaining_budget_cents: 37,
    });
    const cleared = await http(base, 'PATCH', `/v1/keys/${key.id}`, {
      token: owner.api_key,
      body: { budget_cents: null },
    });
    expect(cleared.body.data).toMatchObject({
      budget_cents: null,
      per_call_max_cents: 5,
      remaining_budget_cents: null,
    });
    for (const body of [
      {},
      { scopes: ['catalog:read'] },
      { name: 'rename' },
      { daily_cap_cents: -5 },
      { per_call_max_cents: 0.5 },
      { approval_mode: 'yes' },
    ]) {
      expectFailure(
        await http(base, 'PATCH', `/v1/keys/${key.id}`, { token: owner.api_key, body }),
        400,
        'validation_failed',
      );
    }
    const [row] = await sql(stack.db.url, 'select scopes, per_call_max_cents from api_keys where id = $1', [key.id]);
    expect(row).toEqual({
      scopes: ['catalog:read', 'proxy:call', 'keys:write', 'usage:read'],
      per_call_max_cents: '5',
    });
  });

  it('revokes (idempotently); the revoked key is refused and cannot be patched', async () => {
    const key = (await create({ name: 'temp' })).body.data;
    const res = await http(base, 'DELETE', `/v1/keys/${key.id}`, { token: owner.api_key });
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data).toEqual({ id: key.id, revoked: true, revoked_at: expect.any(String) });
    const again = await http(base, 'DELETE', `/v1/keys/${key.id}`, { token: owner.api_key });
    expect(again.body.data.revoked_at).toBe(res.body.data.revoked_at);
    expectFailure(await http(base, 'GET', '/v1/me', { token: key.api_key }), 401, 'unauthenticated');
    expectFailure(
      await http(base, 'PATCH', `/v1/keys/${key.id}`, { token: owner.api_key, body: { budget_cents: 1 } }),
      409,
      'conflict',
    );
    const active = await http(base, 'GET', '/v1/keys?limit=200', { token: owner.api_key });
    expect(active.body.data.map((k: { id: string }) => k.id)).not.toContain(key.id);
    const withRevoked = await http(base, 'GET', '/v1/keys?limit=200&include_revoked=true', { token: owner.api_key });
    expect(withRevoked.body.data.find((k: { id: string }) => k.id === key.id).revoked_at).toBe(
      res.body.data.revoked_at,
    );
  });

  it('answers 404 for another org’s key and for ids that are not key ids', async () => {
    const mine = (await create({ name: 'mine' })).body.data;
    const stranger = await stack.services.accounts.register({ ip: '10.1.0.2' });
    plaintexts.push(stranger.api_key);
    expectFailure(
      await http(base, 'PATCH', `/v1/keys/${mine.id}`, { token: stranger.api_key, body: { budget_cents: 1 } }),
      404,
      'not_found',
    );
    expectFailure(await http(base, 'DELETE', `/v1/keys/${mine.id}`, { token: stranger.api_key }), 404, 'not_found');
    expectFailure(await http(base, 'DELETE', '/v1/keys/not-a-key', { token: owner.api_key }), 404, 'not_found');
    expect((await http(base, 'GET', '/v1/me', { token: mine.api_key })).status).toBe(200);
  });

  it('refuses key creation for a suspended org', async () => {
    const org = await stack.services.accounts.register({ ip: '10.1.0.3' });
    plaintexts.push(org.api_key);
    await sql(stack.db.url, "update orgs set suspended = true, suspended_reason = 'test' where id = $1", [org.org_id]);
    const res = await create({ name: 'x' }, org.api_key);
    expectFailure(res, 403, 'forbidden');
    expect(res.body.error.message).toMatch(/suspended/);
  });

  it('holds the 100-key cap under 20 concurrent creates at an org with 95 keys', async () => {
    const org = await stack.services.accounts.register({ ip: '10.1.0.4' });
    const em = stack.services.orm.em.fork();
    for (let i = 0; i < 94; i++)
      stack.services.keys.create(em, { orgId: org.org_id, name: `k${i}`, scopes: ['catalog:read'], source: 'api' });
    await em.flush();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        http(base, 'POST', '/v1/keys', { token: org.api_key, body: { name: `c${i}` } }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses, results.map(show).join('\n')).toEqual([...Array(5).fill(201), ...Array(15).fill(409)]);
    for (const r of results) if (r.status === 201) plaintexts.push(r.body.data.api_key as string);
    const [row] = await sql<{ count: string }>(
      stack.db.url,
      'select count(*) from api_keys where org_id = $1 and revoked_at is null',
      [org.org_id],
    );
    expect(row?.count).toBe('100');
  });

  it('keeps no plaintext key anywhere: the database dump and the logs hold only hashes and prefixes', async () => {
    const { stdout: dump } = await promisify(execFile)('pg_dump', ['--inserts', stack.db.url], {
      maxBuffer: 64 * 1024 * 1024,
    });
    const logs = stack.logs.text();
    expect(plaintexts.length).toBeGreaterThanOrEqual(8);
    for (const p of plaintexts) {
      expect(dump).not.toContain(p.slice(17));
      expect(logs).not.toContain(p.slice(17));
    }
  });

  it('a revoked key is refused by a second process (a gateway) within 1 s', async () => {
    const gateway: RunningProcess = await startProcess({
      roles: ['gateway'],
      env: {
        DATABASE_URL: stack.db.url,
        REDIS_URL,
        REDIS_KEY_PREFIX: stack.config.counters.keyPrefix,
        TEMPORAL_ADDRESS: NO_TEMPORAL,
      },
    });
    try {
      const key = (await create({ name: 'short-lived' })).body.data;
      const call = () => http(gateway.urls.gateway, 'GET', '/v1/proxy/some-api/x', { token: key.api_key });
      expect((await call()).status).toBe(404); // authenticated (and now cached) in the gateway process
      expect((await call()).status).toBe(404);
      const revokedAt = Date.now();
      expect((await http(base, 'DELETE', `/v1/keys/${key.id}`, { token: owner.api_key })).status).toBe(200);
      let status = 0;
      while (Date.now() - revokedAt < 1_000) {
        status = (await call()).status;
        if (status === 401) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(status).toBe(401);
      expect(Date.now() - revokedAt).toBeLessThan(1_000);
      expect(gateway.output()).not.toContain(key.api_key.slice(17));
    } finally {
      await gateway.stop();
    }
  });
});
