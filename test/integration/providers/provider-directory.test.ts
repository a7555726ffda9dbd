// The public provider directory (badges, stats, live APIs), provider analytics on seeded usage and ledger rows, and
// Stripe Connect onboarding through stripe-mock with connectOnboardingWorkflow waiting for account.updated.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { workflowIds } from '../../../core/temporal/contracts.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, describe as show } from '../../helpers/http.js';
import { startFullStack, type FullStack } from '../../helpers/full-stack.js';
import { recordHistory } from '../../helpers/temporal.js';
import { startStripeMock, type StripeMock } from '../../helpers/stripe-mock.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

describe('provider directory, analytics and Connect', () => {
  let s: FullStack;
  let stripe: StripeMock;
  let upstream: Upstream;
  let provider: Person;
  let consumer: Person;
  let apiId: string;

  beforeAll(async () => {
    stripe = await startStripeMock();
    upstream = await startUpstream();
    s = await startFullStack({
      env: { UPSTREAM_ALLOW_PRIVATE: 'true', STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_API_BASE: stripe.url },
    });
    provider = await createPerson(s.services);
    consumer = await createPerson(s.services);
    const profile = await http(s.base, 'PATCH', '/v1/me/profile', {
      token: provider.session,
      body: {
        display_name: 'Sky Data',
        slug: 'sky-data',
        bio: 'Weather for builders',
        contact_email: 'ops@sky.example',
      },
    });
    expect(profile.status, show(profile)).toBe(200);
    const created = await http(s.base, 'POST', '/v1/provider/apis', {
      token: provider.session,
      body: {
        name: 'Sky',
        slug: 'sky',
        summary: 'Weather',
        base_url: upstream.url,
        endpoints: [{ method: 'GET', path: '/now', price_cents: 3 }],
      },
    });
    apiId = created.body.data.api_id;
    await http(s.base, 'POST', `/v1/provider/apis/${apiId}/publish`, {
      token: provider.session,
      body: { accept_terms: true },
    });
  });
  afterAll(async () => {
    // Every money test file ends with the books consistent (each org's cached balance = its ledger sum).
    expect(await s.services.ledger.findDrift()).toEqual([]);
    await s?.close();
    await stripe?.stop();
    await upstream?.close();
  });

  it('lists providers with badges and live API counts, and finds them by q', async () => {
    const res = await http(s.base, 'GET', '/v1/providers?q=sky');
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data).toEqual([
      {
        org_id: provider.orgId,
        display_name: 'Sky Data',
        slug: 'sky-data',
        bio: 'Weather for builders',
        website: null,
        avatar_url: null,
        badges: ['verified_email', 'verified_upstream'],
        live_api_count: 1,
      },
    ]);
    expect(res.text).not.toContain('ops@sky.example'); // private contact fields stay private
    expect((await http(s.base, 'GET', '/v1/providers?q=nothing-like-this')).body.data).toEqual([]);
    expect((await http(s.base, 'GET', '/v1/providers?limit=1')).body.meta.pagination).toMatchObject({
      limit: 1,
      offset: 0,
    });
    expectFailure(await http(s.base, 'GET', '/v1/providers?limit=0'), 400, 'validation_failed');
  });

  it('shows a provider profile with stats and live APIs; unknown slugs are 404', async () => {
    await sql(
      s.db.url,
      `insert into usage_events (id, org_id, key_id, api_slug, api_id, method, path, status, outcome, cost_cents, latency_ms, request_id)
       values ($1, $2, $3, 'sky', $4, 'GET', '/now', 200, 'success', 3, 10, 'r1'), ($5, $2, $3, 'sky', $4, 'GET', '/now', 502, 'failed', 0, 10, 'r2')`,
      [newId('usage'), consumer.orgId, consumer.keyId, apiId, newId('usage')],
    );
    const res = await http(s.base, 'GET', '/v1/providers/sky-data');
    expect(res.body.data).toMatchObject({
      slug: 'sky-data',
      stats: { live_apis: 1, calls_30d: 2, success_rate_30d: 0.5 },
      apis: [{ slug: 'sky', name: 'Sky', summary: 'Weather' }],
    });
    expectFailure(await http(s.base, 'GET', '/v1/providers/nobody'), 404, 'not_found');
  });

  it('reports analytics from usage and ledger rows (zeros before any)', async () => {
    const empty = await createPerson(s.services);
    const zero = await http(s.base, 'GET', '/v1/provider/analytics', { token: empty.session });
    expect(zero.body.data.totals).toEqual({
      calls: 0,
      successful_calls: 0,
      gmv_cents: 0,
      provider_earnings_cents: 0,
      platform_fee_cents: 0,
      net_earnings_cents: 0,
      payouts_cents: 0,
    });
    await sql(s.db.url, 'update orgs set credit_cents = 180 where id = $1', [provider.orgId]);
    await sql(
      s.db.url,
      `insert into ledger_entries (id, org_id, kind, amount_cents, balance_after_cents) values
        ($1, $4, 'provider_earning', 300, 300), ($2, $4, 'platform_fee', -60, 240), ($3, $4, 'payout', -60, 180)`,
      [newId('ledgerEntry'), newId('ledgerEntry'), newId('ledgerEntry'), provider.orgId],
    );
    const res = await http(s.base, 'GET', '/v1/provider/analytics', { token: provider.session });
    expect(res.body.data.totals).toEqual({
      calls: 2,
      successful_calls: 1,
      gmv_cents: 3,
      provider_earnings_cents: 300,
      platform_fee_cents: 60,
      net_earnings_cents: 240,
      payouts_cents: 60,
    });
    expect(res.body.data.by_api).toEqual([
      { api_id: apiId, slug: 'sky', calls: 2, successful_calls: 1, gmv_cents: 3, upstream_problem: null },
    ]);
    expect(await s.services.ledger.findDrift()).toEqual([]);
    expectFailure(
      await http(s.base, 'GET', '/v1/provider/analytics?from=2026-01-05&to=2026-01-01', { token: provider.session }),
      400,
      'validation_failed',
    );
  });

  it('onboards to Connect through Stripe and completes when account.updated says payouts are enabled', async () => {
    const res = await http(s.base, 'POST', '/v1/provider/connect/onboard', { token: provider.session });
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data).toMatchObject({
      url: expect.stringMatching(/^https:\/\//),
      account_id: expect.stringMatching(/^acct_/),
      status: 'pending',
      workflow_id: `connect:${provider.orgId}`,
    });
    // A second call reuses the account and the running workflow.
    const again = await http(s.base, 'POST', '/v1/provider/connect/onboard', { token: provider.session });
    expect(again.body.data.account_id).toBe(res.body.data.account_id);

    const accountId = res.body.data.account_id as string;
    expect(
      await s.services.connect.accountUpdated(accountId, {
        charges_enabled: true,
        payouts_enabled: false,
        details_submitted: true,
      }),
    ).toBe(true);
    expect(
      await s.services.connect.accountUpdated(accountId, {
        charges_enabled: true,
        payouts_enabled: true,
        details_submitted: true,
      }),
    ).toBe(true);
    const result = await s.temporal.client.workflow.getHandle(workflowIds.connect(provider.orgId)).result();
    expect(result).toEqual({ status: 'enabled' });
    await recordHistory(s.temporal.address, workflowIds.connect(provider.orgId), 'connect-onboarding-enabled.json');
    const [org] = await sql(s.db.url, 'select stripe_account_id, connect_status from orgs where id = $1', [
      provider.orgId,
    ]);
    expect(org).toEqual({ stripe_account_id: accountId, connect_status: 'enabled' });
    const directory = await http(s.base, 'GET', '/v1/providers/sky-data');
    expect(directory.body.data.badges).toEqual(['verified_email', 'connect_enabled', 'verified_upstream']);
    expect(
      await s.services.connect.accountUpdated('acct_unknown', {
        charges_enabled: true,
        payouts_enabled: true,
        details_submitted: true,
      }),
    ).toBe(false);
  });
});

describe('Connect without Stripe configured', () => {
  it('answers 503 with a clear message', async () => {
    const s = await startFullStack();
    try {
      const person = await createPerson(s.services);
      const res = await http(s.base, 'POST', '/v1/provider/connect/onboard', { token: person.session });
      expectFailure(res, 503, 'internal_error');
      expect(res.body.error.message).toMatch(/Payments are not configured/);
    } finally {
      await s.close();
    }
  });
});
