// Issue 22 item 11: a key's two spend figures follow one rule. A child key's calls count against its parent's budget
// and its parent's daily cap alike, and the parent's `spent_cents` and `spent_today_cents` both include them; every
// surface says so (the REST fields' descriptions, the console's labels). Real Postgres, Redis, gateway and routes;
// a manual clock moves to the next UTC day.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { SPEND_RULE } from '../../../api/pages/console/keys.page.js';
import { SESSION_COOKIE } from '../../../core/auth/authenticator.js';
import { ManualClock } from '../../../core/clock.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import type { Person } from '../../helpers/accounts.js';
import { describe as show, expectFailure, http, serve } from '../../helpers/http.js';
import type { LiveApi } from '../../helpers/listings.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { createConsumer, createPaidApi, closeAll } from '../../helpers/fixtures.js';

interface KeyView {
  id: string;
  name: string;
  parent_key_id: string | null;
  spent_cents: number;
  spent_today_cents: number;
  daily_cap_cents: number | null;
  budget_cents: number | null;
}

describe("a key's spend figures count its child keys (one rule for the budget and the daily cap)", () => {
  let stack: TestStack;
  let gateway: GatewayHandler;
  let gw: RunningHttpServer;
  let app: RunningHttpServer;
  let upstream: Upstream;
  let api: LiveApi;
  let person: Person;
  const clock = new ManualClock(new Date('2026-11-23T12:00:00Z'));

  beforeAll(async () => {
    upstream = await startUpstream();
    stack = await createTestStack({ clock, env: { GATEWAY_RATE_LIMIT_PER_MIN: '100000' } });
    gateway = createGatewayHandler(stack.services);
    gw = await serve(gateway);
    app = await serve(createApiApp(stack.services).callback());
    api = await createPaidApi(stack.services, {
      baseUrl: upstream.url,
      endpoints: [{ method: 'POST', path: '/orders', priceCents: 5 }],
    });
    person = await createConsumer(stack.services, 1_000);
  });
  afterAll(async () => {
    await gateway?.drain.flush();
    await stack?.services.earnings.foldAll();
    if (stack) expect(await stack.services.ledger.findDrift()).toEqual([]);
    await closeAll(app, gw, gateway, stack, upstream);
  });

  const mint = async (token: string, body: Record<string, unknown>) => {
    const res = await http(app.url, 'POST', '/v1/keys', { token, body });
    expect(res.status, show(res)).toBe(201);
    return res.body.data as KeyView & { api_key: string };
  };
  const order = (token: string) => http(gw.url, 'POST', `/v1/proxy/${api.slug}/orders`, { token, body: {} });
  const quote = (token: string) =>
    http(app.url, 'GET', `/v1/apis/${api.slug}/quote?method=POST&path=${encodeURIComponent('/orders')}`, { token });
  /** The org's keys as GET /v1/keys shows them, once the calls answered so far are in Postgres. */
  async function keys(): Promise<Map<string, KeyView>> {
    await gateway.drain.flush();
    const res = await http(app.url, 'GET', '/v1/keys', { token: person.session });
    expect(res.status, show(res)).toBe(200);
    return new Map((res.body.data as KeyView[]).map((k) => [k.name, k]));
  }

  it('children share their parent’s daily cap; the parent’s Spent and Today both include them; the next day resets Today only', async () => {
    // A person mints a capped parent; the parent (a key) mints two children, which take its caps.
    const parent = await mint(person.session, {
      name: 'parent',
      scopes: ['proxy:call', 'keys:write', 'catalog:read'],
      budget_cents: 100,
      daily_cap_cents: 20,
    });
    const a = await mint(parent.api_key, { name: 'child-a', scopes: ['proxy:call', 'catalog:read'] });
    const b = await mint(parent.api_key, { name: 'child-b', scopes: ['proxy:call', 'catalog:read'] });
    expect(a).toMatchObject({ parent_key_id: parent.id, daily_cap_cents: 20, budget_cents: 100 });

    // 5 by the parent, 10 by child A, 5 by child B: the parent's day is at its 20-cent cap.
    for (const token of [parent.api_key, a.api_key, a.api_key, b.api_key]) {
      const res = await order(token);
      expect(res.status, show(res)).toBe(200);
    }
    // Child B has spent only 5 of its own 20 today, but its parent's cap counts both children: refused, naming it.
    const refused = await order(b.api_key);
    expectFailure(refused, 402, 'daily_cap_exceeded');
    expect(refused.body.error.details).toMatchObject({ key_id: parent.id, daily_cap_cents: 20, price_cents: 5 });
    expect(refused.body.error.message).toMatch(/key above this one/);
    expectFailure(await order(parent.api_key), 402, 'daily_cap_exceeded');
    // The quote decides from Postgres by the same rule.
    const q = await quote(b.api_key);
    expect(q.status, show(q)).toBe(200);
    expect(q.body.data.admission).toMatchObject({ allowed: false, error_code: 'daily_cap_exceeded', status: 402 });

    const today = await keys();
    expect(today.get('parent')).toMatchObject({ spent_cents: 20, spent_today_cents: 20 });
    expect(today.get('child-a')).toMatchObject({ spent_cents: 10, spent_today_cents: 10 });
    expect(today.get('child-b')).toMatchObject({ spent_cents: 5, spent_today_cents: 5 });
    // The person's own key (a root that minted nothing) spent nothing.
    expect([...today.values()].find((k) => k.id === person.keyId)).toMatchObject({
      spent_cents: 0,
      spent_today_cents: 0,
    });

    // The next UTC day: Today starts again for every key, Spent keeps counting (budget 100).
    clock.advance(24 * 3_600_000);
    expect((await order(b.api_key)).status).toBe(200);
    const tomorrow = await keys();
    expect(tomorrow.get('parent')).toMatchObject({ spent_cents: 25, spent_today_cents: 5 });
    expect(tomorrow.get('child-b')).toMatchObject({ spent_cents: 10, spent_today_cents: 5 });
    expect(tomorrow.get('child-a')).toMatchObject({ spent_cents: 10, spent_today_cents: 0 });
  });

  it('the console labels both figures as including child keys and names each child’s parent', async () => {
    const res = await fetch(`${app.url}/console/keys`, { headers: { cookie: `${SESSION_COOKIE}=${person.session}` } });
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('<th scope="col">Spent / budget<div class="muted">incl. child keys</div></th>');
    expect(page).toContain('<th scope="col">Today (UTC) / daily cap<div class="muted">incl. child keys</div></th>');
    expect(page).toContain(`<p id="spend-rule" class="muted">${SPEND_RULE}</p>`);
    const row = (name: string) => page.split('<tr ').find((r) => r.includes(`<th scope="row">${name}<`)) ?? '';
    expect(row('child-a')).toContain('child key of parent');
    expect(row('parent')).not.toContain('child key of');
    // The parent's bars: $0.25 of its $1.00 budget, $0.05 of its $0.20 daily cap (both with its children's calls).
    expect(row('parent')).toContain('$0.25 / $1.00');
    expect(row('parent')).toContain('$0.05 / $0.20');
  });

  it('the API reference describes both fields by the same rule', async () => {
    const res = await http(app.url, 'GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    const text = JSON.stringify(res.body);
    expect(text).toContain('Spent in all, including child keys');
    expect(text).toContain('Spent on the current UTC day, including child keys, by the same rule as `spent_cents`');
    expect(text).toContain('Cap per UTC day on `spent_today_cents`: this key’s spend and its child keys’ together.');
  });
});
