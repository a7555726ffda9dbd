// Key governance (DESIGN.md "Keys and governance"): a key may tighten itself but never loosen itself, a key minted by
// a key is a child that is never looser than its parent, a key governs only itself and its descendants, and a
// person's session (owner or admin) may do all of it. Real Postgres and Redis, two processes' key caches.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createPerson } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, serve, describe as show } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

interface Key {
  id: string;
  api_key: string;
  [field: string]: unknown;
}

describe('key governance', () => {
  let stack: TestStack;
  /** A second process's services on the same database and Redis (its own key cache). */
  let other: TestStack;
  let server: RunningHttpServer;
  let base: string;
  let root: { org_id: string; api_key: string; key_id: string };

  beforeAll(async () => {
    stack = await createTestStack();
    other = await createTestStack({ db: stack.db, env: { REDIS_KEY_PREFIX: stack.config.counters.keyPrefix } });
    server = await serve(createApiApp(stack.services).callback());
    base = server.url;
    root = await register();
  });
  afterAll(async () => {
    await server.close();
    await other.close();
    await stack.close();
  });

  async function register() {
    const res = await http(base, 'POST', '/v1/register');
    expect(res.status, show(res)).toBe(201);
    const me = await http(base, 'GET', '/v1/me', { token: res.body.data.api_key });
    return {
      ...(res.body.data as { org_id: string; api_key: string }),
      key_id: me.body.data.credential.key_id as string,
    };
  }

  async function mint(token: string, body: Record<string, unknown>): Promise<Key> {
    const res = await http(base, 'POST', '/v1/keys', { token, body: { name: 'k', ...body } });
    expect(res.status, show(res)).toBe(201);
    return res.body.data as Key;
  }

  const patch = (token: string, id: string, body: Record<string, unknown>) =>
    http(base, 'PATCH', `/v1/keys/${id}`, { token, body });
  const revoke = (token: string, id: string) => http(base, 'DELETE', `/v1/keys/${id}`, { token });

  async function row(id: string) {
    const [r] = await sql(
      stack.db.url,
      'select budget_cents, per_call_max_cents, daily_cap_cents, approval_mode, parent_key_id, revoked_at from api_keys where id = $1',
      [id],
    );
    return r;
  }

  it('a key may tighten its own caps and turn approval mode on, but never loosen them', async () => {
    const key = await mint(root.api_key, { budget_cents: 500, per_call_max_cents: 10, daily_cap_cents: 100 });
    for (const body of [{ budget_cents: 400 }, { per_call_max_cents: 5 }, { approval_mode: true }]) {
      const res = await patch(key.api_key, key.id, body);
      expect(res.status, show(res)).toBe(200);
    }
    for (const body of [
      { budget_cents: 1_000 },
      { budget_cents: null },
      { per_call_max_cents: 6 },
      { daily_cap_cents: null },
      { approval_mode: false },
      { budget_cents: 300, daily_cap_cents: 101 }, // one loosening spoils the whole patch
    ]) {
      const res = await patch(key.api_key, key.id, body);
      expectFailure(res, 403, 'forbidden');
      expect(res.body.error.message, show(res)).toMatch(/session/);
      expect(res.body.error.details).toMatchObject({ required_credential: 'session' });
    }
    expect(await row(key.id)).toMatchObject({
      budget_cents: '400',
      per_call_max_cents: '5',
      daily_cap_cents: '100',
      approval_mode: true,
    });
  });

  it('a child is never looser than its parent: caps filled in, approval mode inherited, scopes within', async () => {
    const parent = await mint(root.api_key, {
      budget_cents: 400,
      per_call_max_cents: 5,
      daily_cap_cents: 100,
      approval_mode: true,
      scopes: ['catalog:read', 'proxy:call', 'keys:write'],
    });
    const child = await mint(parent.api_key, {});
    expect(child).toMatchObject({
      parent_key_id: parent.id,
      budget_cents: 400,
      per_call_max_cents: 5,
      daily_cap_cents: 100,
      approval_mode: true,
      scopes: ['catalog:read', 'proxy:call', 'keys:write'],
    });
    const tighter = await mint(parent.api_key, { budget_cents: 50, scopes: ['proxy:call'] });
    expect(tighter).toMatchObject({ parent_key_id: parent.id, budget_cents: 50, per_call_max_cents: 5 });
    for (const body of [
      { budget_cents: 401 },
      { budget_cents: null },
      { per_call_max_cents: 6 },
      { daily_cap_cents: null },
      { approval_mode: false },
    ]) {
      const res = await http(base, 'POST', '/v1/keys', { token: parent.api_key, body: { name: 'x', ...body } });
      expectFailure(res, 403, 'forbidden');
      expect(res.body.error.message, show(res)).toMatch(/parent/);
    }
    const wider = await http(base, 'POST', '/v1/keys', {
      token: parent.api_key,
      body: { name: 'x', scopes: ['usage:read'] },
    });
    expectFailure(wider, 403, 'forbidden');
  });

  it('a key changes or revokes only itself and its descendants; the uncapped root governs them all', async () => {
    const a = await mint(root.api_key, { budget_cents: 100 });
    const b = await mint(root.api_key, { budget_cents: 100 });
    const a1 = await mint(a.api_key, {});
    expect(a1).toMatchObject({ parent_key_id: a.id, budget_cents: 100 });

    // Not a sibling, not a parent, not a grandparent, not even to tighten.
    for (const [actor, target] of [
      [a, b],
      [a1, a],
      [a1, b],
    ] as const) {
      const res = await patch(actor.api_key, target.id, { budget_cents: 1 });
      expectFailure(res, 403, 'forbidden');
      expect(res.body.error.message, show(res)).toMatch(/descendants/);
      expectFailure(await revoke(actor.api_key, target.id), 403, 'forbidden');
    }
    expectFailure(await patch(a.api_key, root.key_id, { budget_cents: 1 }), 403, 'forbidden');
    expectFailure(await revoke(a.api_key, root.key_id), 403, 'forbidden');
    expect(await row(b.id)).toMatchObject({ budget_cents: '100', revoked_at: null });
    expect(await row(root.key_id)).toMatchObject({ budget_cents: null, revoked_at: null });

    // Its own descendant: tighten yes, loosen no (that needs a person), revoke yes.
    expect((await patch(a.api_key, a1.id, { budget_cents: 60 })).status).toBe(200);
    expectFailure(await patch(a.api_key, a1.id, { budget_cents: 80 }), 403, 'forbidden');
    expect((await revoke(a.api_key, a1.id)).status).toBe(200);

    // The anonymous org's first key (no caps, no parent) keeps full control of its children.
    const loosened = await patch(root.api_key, b.id, { budget_cents: null });
    expect(loosened.status, show(loosened)).toBe(200);
    expect(loosened.body.data).toMatchObject({ budget_cents: null, parent_key_id: root.key_id });
    expect((await revoke(root.api_key, b.id)).status).toBe(200);
  });

  it('a person’s session (owner or admin) may loosen; a member’s session and the key itself may not', async () => {
    const owner = await createPerson(stack.services);
    const admin = await createPerson(stack.services, { orgId: owner.orgId, role: 'admin' });
    const member = await createPerson(stack.services, { orgId: owner.orgId, role: 'member' });
    const created = await http(base, 'POST', '/v1/keys', {
      token: owner.session,
      body: { name: 'agent', budget_cents: 100, approval_mode: true },
    });
    expect(created.status, show(created)).toBe(201);
    const key = created.body.data as Key;
    expect(key.parent_key_id).toBeNull(); // a person's key is a root
    expectFailure(await patch(key.api_key, key.id, { budget_cents: 200 }), 403, 'forbidden');
    const byMember = await patch(member.session, key.id, { budget_cents: 200 });
    expectFailure(byMember, 403, 'forbidden');
    expect(byMember.body.error.message).toMatch(/owner or admin/);
    expect((await patch(owner.session, key.id, { budget_cents: 200 })).body.data).toMatchObject({
      budget_cents: 200,
    });
    expect((await patch(admin.session, key.id, { approval_mode: false, budget_cents: null })).body.data).toMatchObject({
      budget_cents: null,
      approval_mode: false,
    });
    // Even a person cannot make a child looser than its parent: loosen the parent first.
    await patch(owner.session, key.id, { budget_cents: 300 });
    const child = await mint(key.api_key, {});
    expect(child).toMatchObject({ budget_cents: 300, parent_key_id: key.id });
    const looser = await patch(owner.session, child.id, { budget_cents: null });
    expectFailure(looser, 403, 'forbidden');
    expect(looser.body.error.message).toMatch(/parent/);
  });

  it('tightening a key tightens its descendants, and revoking it revokes them', async () => {
    const p = await mint(root.api_key, { budget_cents: 1_000, daily_cap_cents: 500 });
    const q = await mint(p.api_key, { budget_cents: 800 });
    const z = await mint(q.api_key, { budget_cents: 100 });
    expect((await patch(root.api_key, p.id, { budget_cents: 300, daily_cap_cents: 50 })).status).toBe(200);
    expect(await row(q.id)).toMatchObject({ budget_cents: '300', daily_cap_cents: '50' });
    expect(await row(z.id)).toMatchObject({ budget_cents: '100', daily_cap_cents: '50' });
    expect((await patch(p.api_key, p.id, { approval_mode: true })).status).toBe(200);
    expect(await row(z.id)).toMatchObject({ approval_mode: true });

    const res = await revoke(root.api_key, p.id);
    expect(res.status, show(res)).toBe(200);
    for (const k of [p, q, z]) {
      expect((await row(k.id))?.revoked_at, k.id).not.toBeNull();
      expectFailure(await http(base, 'GET', '/v1/me', { token: k.api_key }), 401, 'unauthenticated');
    }
  });

  it('chains are at most 4 keys deep below their root', async () => {
    let parent = { api_key: root.api_key, id: root.key_id };
    for (let depth = 1; depth <= 4; depth++) {
      const k = await mint(parent.api_key, {});
      expect(k.parent_key_id).toBe(parent.id);
      parent = k;
    }
    const res = await http(base, 'POST', '/v1/keys', { token: parent.api_key, body: { name: 'too-deep' } });
    expectFailure(res, 403, 'forbidden');
    expect(res.body.error.message).toMatch(/4/);
  });

  it('lists parent_key_id in the key summary', async () => {
    const child = await mint(root.api_key, {});
    const res = await http(base, 'GET', '/v1/keys?limit=200', { token: root.api_key });
    const byId = new Map((res.body.data as { id: string; parent_key_id: string | null }[]).map((k) => [k.id, k]));
    expect(byId.get(root.key_id)?.parent_key_id).toBeNull();
    expect(byId.get(child.id)?.parent_key_id).toBe(root.key_id);
  });

  it('authentication carries the ancestors (nearest first) and another process sees a parent’s change within 1 s', async () => {
    const p = await mint(root.api_key, { budget_cents: 900, daily_cap_cents: 300 });
    const q = await mint(p.api_key, { budget_cents: 700 });
    const z = await mint(q.api_key, {});
    expect((await other.services.keys.authenticate(root.api_key)).key.ancestors).toEqual([]);
    // Each ancestor's budget and daily cap: a child's spend counts against both (q took p's daily cap).
    expect((await other.services.keys.authenticate(z.api_key)).key.ancestors).toEqual([
      { keyId: q.id, budgetCents: 700, dailyCapCents: 300 },
      { keyId: p.id, budgetCents: 900, dailyCapCents: 300 },
      { keyId: root.key_id, budgetCents: null, dailyCapCents: null },
    ]);

    // The other process has z cached; a change to its grandparent must reach it (not wait for the 60 s TTL).
    const changedAt = Date.now();
    expect((await patch(root.api_key, p.id, { budget_cents: 650 })).status).toBe(200);
    let seen: unknown;
    while (Date.now() - changedAt < 1_000) {
      seen = (await other.services.keys.authenticate(z.api_key)).key.ancestors;
      if (JSON.stringify(seen).includes('650')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen).toEqual([
      { keyId: q.id, budgetCents: 650, dailyCapCents: 300 },
      { keyId: p.id, budgetCents: 650, dailyCapCents: 300 },
      { keyId: root.key_id, budgetCents: null, dailyCapCents: null },
    ]);

    // Revoking the parent reaches the other process's cached grandchild too.
    const revokedAt = Date.now();
    expect((await revoke(root.api_key, p.id)).status).toBe(200);
    let refused = false;
    while (!refused && Date.now() - revokedAt < 1_000) {
      refused = await other.services.keys.authenticate(z.api_key).then(
        () => false,
        () => true,
      );
      if (!refused) await new Promise((r) => setTimeout(r, 20));
    }
    expect(refused).toBe(true);
  });
});
