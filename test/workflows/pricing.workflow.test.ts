// Pricing: decreases and discounts apply at once; an increase on a live listing waits out the notice period in
// priceChangeWorkflow and then applies; a cancelled one never does. The histories recorded here are replayed by
// replay.workflow.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowIds } from '../../core/temporal/contracts.js';
import { createPerson, type Person } from '../helpers/accounts.js';
import { sql } from '../helpers/db.js';
import { expectFailure, http, describe as show } from '../helpers/http.js';
import { startFullStack, type FullStack } from '../helpers/full-stack.js';
import { recordHistory } from '../helpers/temporal.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

const NOTICE_MS = 1_500;

describe('pricing and scheduled increases', () => {
  let s: FullStack;
  let upstream: Upstream;
  let provider: Person;

  beforeAll(async () => {
    upstream = await startUpstream();
    s = await startFullStack({
      env: { UPSTREAM_ALLOW_PRIVATE: 'true', PRICE_INCREASE_NOTICE_DAYS: String(NOTICE_MS / 86_400_000) },
    });
    provider = await createPerson(s.services);
  });
  afterAll(async () => {
    // Every money test file ends with the books consistent (each org's cached balance = its ledger sum).
    expect(await s.services.ledger.findDrift()).toEqual([]);
    await s?.close();
    await upstream?.close();
  });

  const call = (method: string, p: string, body?: unknown) =>
    http(s.base, method, p, { token: provider.session, body });

  async function liveApi(slug: string) {
    const created = await call('POST', '/v1/provider/apis', {
      name: slug,
      slug,
      summary: 'Priced API',
      base_url: upstream.url,
      endpoints: [
        { method: 'GET', path: '/a', price_cents: 10 },
        { method: 'GET', path: '/b', price_cents: 10 },
        { method: 'GET', path: '/c', price_cents: 10 },
      ],
    });
    expect(created.status, show(created)).toBe(201);
    const published = await call('POST', `/v1/provider/apis/${created.body.data.api_id}/publish`, {
      accept_terms: true,
    });
    expect(published.body.data.status, show(published)).toBe('live');
    const [a, b, c] = created.body.data.endpoints.map((e: { endpoint_id: string }) => e.endpoint_id);
    return { apiId: created.body.data.api_id as string, a: a as string, b: b as string, c: c as string };
  }

  const priceOf = async (endpointId: string) =>
    (
      await sql<{ price_cents: string; pending_price_cents: string | null }>(
        s.db.url,
        'select price_cents, pending_price_cents from endpoints where id = $1',
        [endpointId],
      )
    )[0];

  it('applies a decrease and a discount at once, and an increase only after the notice period', async () => {
    const { apiId, a, b } = await liveApi('priced');
    const res = await call('PATCH', `/v1/provider/apis/${apiId}/pricing`, {
      endpoints: [
        { endpoint_id: a, price_cents: 4, discount: { percent: 25, label: 'launch' } },
        { endpoint_id: b, price_cents: 15 },
      ],
    });
    expect(res.status, show(res)).toBe(200);
    const [ea, eb] = res.body.data.endpoints;
    expect(ea).toMatchObject({
      price_cents: 4,
      price_cents_effective: 3,
      price_increase: null,
      discount: { percent: 25, off_cents: 1, label: 'launch' },
    });
    expect(eb).toMatchObject({
      price_cents: 10,
      price_cents_effective: 10,
      price_increase: { price_cents: 15, effective_at: expect.any(String) },
    });

    // The listing shows the scheduled increase while it is pending.
    const listing = await http(s.base, 'GET', '/v1/apis/priced');
    expect(
      listing.body.data.endpoints.find((e: { endpoint_id: string }) => e.endpoint_id === b).price_increase.price_cents,
    ).toBe(15);
    expect(await priceOf(b)).toEqual({ price_cents: '10', pending_price_cents: '15' });

    // The workflow applies it at the effective time.
    await expect
      .poll(() => priceOf(b), { timeout: 15_000, interval: 200 })
      .toEqual({ price_cents: '15', pending_price_cents: null });
    const result = await s.temporal.client.workflow.getHandle(workflowIds.priceChange(apiId, b)).result();
    expect(result).toEqual({ applied: true });
    await recordHistory(s.temporal.address, workflowIds.priceChange(apiId, b), 'price-change-applied.json');
    await recordHistory(s.temporal.address, workflowIds.publish(apiId), 'verify-and-publish-published.json');
  });

  it('never applies a cancelled increase', async () => {
    const { apiId, c } = await liveApi('cancelled');
    await call('PATCH', `/v1/provider/apis/${apiId}/pricing`, { endpoints: [{ endpoint_id: c, price_cents: 99 }] });
    const cancelled = await call('DELETE', `/v1/provider/apis/${apiId}/endpoints/${c}/pending-price`);
    expect(cancelled.status, show(cancelled)).toBe(200);
    expect(cancelled.body.data).toMatchObject({ price_cents: 10, price_increase: null });
    await new Promise((r) => setTimeout(r, NOTICE_MS + 1_000));
    expect(await priceOf(c)).toEqual({ price_cents: '10', pending_price_cents: null });
    const description = await s.temporal.client.workflow.getHandle(workflowIds.priceChange(apiId, c)).describe();
    expect(description.status.name).toBe('CANCELLED');
    expectFailure(await call('DELETE', `/v1/provider/apis/${apiId}/endpoints/${c}/pending-price`), 404, 'not_found');
  });

  it('replaces a pending increase with a new one, and a decrease cancels it', async () => {
    const { apiId, a } = await liveApi('replaced');
    await call('PATCH', `/v1/provider/apis/${apiId}/pricing`, { endpoints: [{ endpoint_id: a, price_cents: 20 }] });
    await call('PATCH', `/v1/provider/apis/${apiId}/pricing`, { endpoints: [{ endpoint_id: a, price_cents: 30 }] });
    expect(await priceOf(a)).toEqual({ price_cents: '10', pending_price_cents: '30' });
    await call('PATCH', `/v1/provider/apis/${apiId}/pricing`, { endpoints: [{ endpoint_id: a, price_cents: 8 }] });
    expect(await priceOf(a)).toEqual({ price_cents: '8', pending_price_cents: null });
    await new Promise((r) => setTimeout(r, NOTICE_MS + 1_000));
    expect(await priceOf(a)).toEqual({ price_cents: '8', pending_price_cents: null });
  });

  it('applies increases at once on a draft listing', async () => {
    const created = await call('POST', '/v1/provider/apis', {
      name: 'Draft',
      slug: 'draft-priced',
      summary: 's',
      base_url: upstream.url,
      endpoints: [{ method: 'GET', path: '/x', price_cents: 1 }],
    });
    const id = created.body.data.endpoints[0].endpoint_id as string;
    const res = await call('PATCH', `/v1/provider/apis/${created.body.data.api_id}/pricing`, {
      endpoints: [{ endpoint_id: id, price_cents: 50 }],
    });
    expect(res.body.data.endpoints[0]).toMatchObject({ price_cents: 50, price_increase: null });
  });

  it('tags every run that concerns a listing with its slug (ApiSlug) and provider (OrgId) for operators', async () => {
    const { apiId, a } = await liveApi('attributed');
    const priced = await call('PATCH', `/v1/provider/apis/${apiId}/pricing`, {
      endpoints: [{ endpoint_id: a, price_cents: 25 }],
    });
    expect(priced.body.data.endpoints[0].price_increase, show(priced)).toBeTruthy();
    const verified = await call('POST', `/v1/provider/apis/${apiId}/verify`);
    expect(verified.status, show(verified)).toBe(200);
    expect((await call('POST', `/v1/provider/apis/${apiId}/unpublish`)).status).toBe(200);

    const runs = async (query: string) => {
      const found: string[] = [];
      for await (const wf of s.temporal.client.workflow.list({ query })) found.push(`${wf.type} ${wf.workflowId}`);
      return found.sort();
    };
    const expected = [
      `priceChangeWorkflow ${workflowIds.priceChange(apiId, a)}`,
      `verifyAndPublishWorkflow ${workflowIds.publish(apiId)}`,
      `verifyAndPublishWorkflow ${workflowIds.publish(apiId)}`,
      `verifyAndPublishWorkflow ${workflowIds.publish(apiId)}`,
    ];
    await expect.poll(() => runs('ApiSlug = "attributed"'), { timeout: 10_000 }).toEqual(expected);
    expect(await runs(`ApiSlug = "${apiId}"`)).toEqual([]);
    expect(await runs(`OrgId = "${provider.orgId}" AND ApiSlug = "attributed"`)).toEqual(expected);
  });

  it('validates pricing input', async () => {
    const { apiId, a } = await liveApi('validated');
    for (const body of [
      { endpoints: [] },
      { endpoints: [{ endpoint_id: a }] },
      { endpoints: [{ endpoint_id: a, price_cents: -1 }] },
      { endpoints: [{ endpoint_id: a, price_cents: 1.5 }] },
      { endpoints: [{ endpoint_id: a, discount: { percent: 10, amount_cents: 1 } }] },
      { endpoints: [{ endpoint_id: a, discount: { percent: 101 } }] },
      {
        endpoints: [
          {
            endpoint_id: a,
            discount: { percent: 10, starts_at: '2026-01-02T00:00:00Z', ends_at: '2026-01-01T00:00:00Z' },
          },
        ],
      },
      {
        endpoints: [
          { endpoint_id: a, price_cents: 1 },
          { endpoint_id: a, price_cents: 2 },
        ],
      },
    ]) {
      expectFailure(await call('PATCH', `/v1/provider/apis/${apiId}/pricing`, body), 400, 'validation_failed');
    }
    expectFailure(
      await call('PATCH', `/v1/provider/apis/${apiId}/pricing`, {
        endpoints: [{ endpoint_id: 'ep_00000000000000000000000000', price_cents: 1 }],
      }),
      404,
      'not_found',
    );
  });
});
