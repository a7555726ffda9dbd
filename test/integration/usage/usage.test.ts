// GET /v1/usage on seeded usage events: time range, key filter, pagination, totals, isolation between orgs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { ManualClock } from '../../../core/clock.js';
import { newId } from '../../../core/ids.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, serve, describe as show } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

describe('usage', () => {
  let stack: TestStack;
  let server: RunningHttpServer;
  let base: string;
  let mine: { org_id: string; api_key: string; key_id: string };
  let theirs: { org_id: string; api_key: string; key_id: string };
  const clock = new ManualClock(Date.parse('2026-03-10T12:00:00Z'));

  async function account(ip: string) {
    const reg = await stack.services.accounts.register({ ip });
    const { principal } = await stack.services.keys.authenticate(reg.api_key);
    return { ...reg, key_id: principal.type === 'api_key' ? principal.keyId : '' };
  }

  async function seed(org: { org_id: string; key_id: string }, at: string, cost: number, outcome = 'success') {
    await sql(
      stack.db.url,
      `insert into usage_events (id, org_id, key_id, api_slug, method, path, status, outcome, cost_cents, price_cents_effective,
         credit_applied_cents, billable_cents, latency_ms, request_id, created_at)
       values ($1, $2, $3, 'weather', 'GET', '/today', $4, $5, $6, $6, $6, 0, 12, $7, $8)`,
      [newId('usage'), org.org_id, org.key_id, outcome === 'success' ? 200 : 502, outcome, cost, newId('request'), at],
    );
  }

  beforeAll(async () => {
    stack = await createTestStack({ clock });
    server = await serve(createApiApp(stack.services).callback());
    base = server.url;
    mine = await account('10.2.0.1');
    theirs = await account('10.2.0.2');
    await seed(mine, '2026-03-01T10:00:00Z', 1);
    await seed(mine, '2026-03-05T23:59:59Z', 2);
    await seed(mine, '2026-03-06T00:00:00Z', 3);
    await seed(mine, '2026-03-09T08:00:00Z', 0, 'failed');
    await seed(mine, '2026-01-15T08:00:00Z', 50); // outside the default 30 days
    await seed(theirs, '2026-03-05T12:00:00Z', 99);
  });
  afterAll(async () => {
    // Every money test file ends with the books consistent (each org's cached balance = its ledger sum).
    expect(await stack.services.ledger.findDrift()).toEqual([]);
    await server.close();
    await stack.close();
  });

  it('lists the last 30 days by default, newest first, with totals', async () => {
    const res = await http(base, 'GET', '/v1/usage', { token: mine.api_key });
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data.map((u: { created_at: string }) => u.created_at)).toEqual([
      '2026-03-09T08:00:00.000Z',
      '2026-03-06T00:00:00.000Z',
      '2026-03-05T23:59:59.000Z',
      '2026-03-01T10:00:00.000Z',
    ]);
    expect(res.body.data[0]).toMatchObject({
      api_slug: 'weather',
      method: 'GET',
      status: 502,
      outcome: 'failed',
      cost_cents: 0,
      key_id: mine.key_id,
    });
    expect(res.body.meta.summary).toEqual({ calls: 4, successful_calls: 3, cost_cents: 6, billable_cents: 0 });
    expect(res.body.meta.range).toEqual({ from: '2026-02-08T12:00:00.000Z', to: '2026-03-10T12:00:00.000Z' });
  });

  it('filters by date: a date-only `to` includes that whole UTC day', async () => {
    const res = await http(base, 'GET', '/v1/usage?from=2026-03-05&to=2026-03-05', { token: mine.api_key });
    expect(res.body.data.map((u: { cost_cents: number }) => u.cost_cents)).toEqual([2]);
    const exact = await http(base, 'GET', '/v1/usage?from=2026-03-05T00:00:00Z&to=2026-03-06T00:00:01Z', {
      token: mine.api_key,
    });
    expect(exact.body.data.map((u: { cost_cents: number }) => u.cost_cents)).toEqual([3, 2]);
    const old = await http(base, 'GET', '/v1/usage?from=2026-01-01&to=2026-01-31', { token: mine.api_key });
    expect(old.body.meta.summary.cost_cents).toBe(50);
  });

  it('paginates', async () => {
    const p1 = await http(base, 'GET', '/v1/usage?limit=3', { token: mine.api_key });
    const p2 = await http(base, 'GET', '/v1/usage?limit=3&offset=3', { token: mine.api_key });
    expect(p1.body.data).toHaveLength(3);
    expect(p1.body.meta.pagination).toEqual({ limit: 3, offset: 0, total: 4, has_more: true });
    expect(p2.body.data).toHaveLength(1);
    expect(p2.body.meta.pagination.has_more).toBe(false);
  });

  it('filters by key and never shows another org’s usage', async () => {
    const res = await http(base, 'GET', `/v1/usage?key_id=${theirs.key_id}`, { token: mine.api_key });
    expect(res.body.data).toEqual([]);
    const theirsRes = await http(base, 'GET', '/v1/usage', { token: theirs.api_key });
    expect(theirsRes.body.meta.summary).toEqual({ calls: 1, successful_calls: 1, cost_cents: 99, billable_cents: 0 });
  });

  it('refuses bad ranges and parameters with 400', async () => {
    for (const q of [
      'from=yesterday',
      'to=2026-13-01',
      'from=2026-03-05&to=2026-03-01',
      'from=2024-01-01&to=2026-01-01',
      'limit=500',
      'sort=asc',
      'from=2026-03-05T10:00:00',
    ]) {
      expectFailure(await http(base, 'GET', `/v1/usage?${q}`, { token: mine.api_key }), 400, 'validation_failed');
    }
  });
});
