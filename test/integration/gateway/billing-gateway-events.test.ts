// Billing and listing changes reach every gateway at once (core/spend/gateway-events.ts): two real gateway processes share
// Redis and Postgres; each has the org's fast state and the listing cached from a call just before the change. An
// operator's suspension (the admin CLI, its own process), the unsuspension, a price decrease, a cancelled and an
// applied scheduled increase, a billing-mode change and an unpublish apply to the very next call on both gateways,
// well within 1 s, instead of waiting out their 5 s refreshes.
import { waitFor } from '../../helpers/ports.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../../core/auth/scopes.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { ROOT, REDIS_URL } from '../../helpers/env.js';
import { expectFailure, http, describe as show } from '../../helpers/http.js';
import { createLiveApi, type LiveApi } from '../../helpers/listings.js';
import { stackRoleEnv, startGatewayPair, type RunningProcess } from '../../helpers/processes.js';
import { startListedStack, type ListedStack } from '../../helpers/listed-stack.js';
import { createConsumer } from '../../helpers/fixtures.js';

const run = promisify(execFile);
/** Time for a published message to reach the subscribers (Redis pub/sub on loopback takes well under 10 ms). */
const SETTLE_MS = 150;

describe('billing and listing changes reach every gateway at once', () => {
  let s: ListedStack;
  let gateways: RunningProcess[] = [];

  beforeAll(async () => {
    s = await startListedStack({ endpoints: [{ method: 'GET', path: '/paid', priceCents: 10 }] });
    gateways = await startGatewayPair(stackRoleEnv(s.stack));
  }, 120_000);
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    expect(await s.stack.services.ledger.findDrift()).toEqual([]);
    await s?.close();
  });

  const paidCall = (gateway: RunningProcess, consumer: Person, slug = s.api.slug) =>
    http(gateway.urls.gateway, 'GET', `/v1/proxy/${slug}/paid`, { token: consumer.apiKey });

  /** The next paid call to each gateway answers 200 (with `meta` among its fields, when given). */
  async function expectBoth(consumer: Person, meta?: Record<string, unknown>, slug = s.api.slug): Promise<void> {
    for (const gateway of gateways) {
      const res = await paidCall(gateway, consumer, slug);
      expect(res.status, show(res)).toBe(200);
      if (meta) expect(res.body.meta).toMatchObject(meta);
    }
  }

  /** Both gateways serve the consumer now (so each holds the org's state and the listing in its caches). */
  async function warm(consumer: Person, cost = 10): Promise<void> {
    await expectBoth(consumer, { cost_cents: cost });
  }

  const admin = async (...args: string[]) => {
    const { stdout } = await run('npx', ['tsx', 'scripts/admin.ts', ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: s.stack.db.url,
        REDIS_URL,
        REDIS_KEY_PREFIX: s.stack.config.counters.keyPrefix,
        LOG_LEVEL: 'silent',
      },
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  };

  async function consumerWith(cents: number): Promise<Person> {
    const consumer = await createConsumer(s.stack.services, cents);
    return consumer;
  }

  it('an operator suspension refuses the next paid call on both gateways; the unsuspension serves it', async () => {
    const consumer = await consumerWith(1_000);
    await warm(consumer);

    expect(await admin('suspend', consumer.orgId, '--reason', 'abuse report')).toMatchObject({ suspended: true });
    const suspendedAt = Date.now();
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    for (const gateway of gateways) expectFailure(await paidCall(gateway, consumer), 402, 'payment_required');
    expect(Date.now() - suspendedAt).toBeLessThan(1_000);

    expect(await admin('unsuspend', consumer.orgId)).toMatchObject({ suspended: false });
    const liftedAt = Date.now();
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    await expectBoth(consumer);
    expect(Date.now() - liftedAt).toBeLessThan(1_000);
    // The calls reach Postgres within moments of their answers (the usage drain: docs/durability.md).
    const balance = async () => {
      const [org] = await s.stack.services.orm.em
        .fork()
        .execute<{ credit_cents: string }[]>('select credit_cents from orgs where id = ?', [consumer.orgId]);
      return Number(org!.credit_cents);
    };
    await waitFor(async () => (await balance()) === 1_000 - 4 * 10, {
      timeoutMs: 5_000,
      what: 'the four calls booked',
    });
  }, 60_000);

  it('a price decrease is charged by both gateways on the next call', async () => {
    const consumer = await consumerWith(1_000);
    await warm(consumer, 10);
    const endpointId = s.api.endpoints['GET /paid']!;
    // The provider's own PATCH /pricing, as its service call (the route only parses and calls it).
    const res = await s.stack.services.priceChanges.updatePricing(
      { type: 'api_key', orgId: s.provider.orgId, keyId: s.provider.keyId, keyPrefix: 'svc_live_', scopes: SCOPES },
      s.api.apiId,
      { endpoints: [{ endpoint_id: endpointId, price_cents: 4 }] },
    );
    expect(res.endpoints[0]).toMatchObject({ price_cents: 4, price_increase: null });
    const changedAt = Date.now();
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    await expectBoth(consumer, { cost_cents: 4, price_cents_effective: 4 });
    expect(Date.now() - changedAt).toBeLessThan(1_000);
  });

  /** A fresh listing whose endpoint carries a scheduled increase to 25 cents at `effectiveAt` (set as the pricing
   * workflow's schedule leaves it), not yet seen by either gateway. */
  async function listingWithIncrease(effectiveAt: Date): Promise<{ listing: LiveApi; endpointId: string }> {
    const listing = await createLiveApi(s.stack.services, {
      providerOrgId: s.provider.orgId,
      baseUrl: s.upstream.url,
      endpoints: [{ method: 'GET', path: '/paid', priceCents: 10 }],
    });
    const endpointId = listing.endpoints['GET /paid']!;
    await s.stack.services.orm.em
      .fork()
      .execute('update endpoints set pending_price_cents = 25, pending_price_effective_at = ? where id = ?', [
        effectiveAt,
        endpointId,
      ]);
    return { listing, endpointId };
  }

  it('a cancelled increase is never charged: both gateways drop the cached schedule at once', async () => {
    const consumer = await consumerWith(1_000);
    const effectiveAt = new Date(Date.now() + 1_500);
    const { listing, endpointId } = await listingWithIncrease(effectiveAt);
    for (const gateway of gateways) {
      const res = await paidCall(gateway, consumer, listing.slug); // each gateway caches the listing and its schedule
      expect(res.status, show(res)).toBe(200);
      expect(res.body.meta.cost_cents).toBe(10);
    }
    // The provider cancels before the increase is due (no Temporal here: the schedule's workflow is not running).
    const temporal = s.stack.services.temporal;
    const cancelRun = temporal.cancelPriceChange.bind(temporal);
    temporal.cancelPriceChange = () => Promise.resolve(false);
    try {
      const principal = {
        type: 'api_key' as const,
        orgId: s.provider.orgId,
        keyId: s.provider.keyId,
        keyPrefix: 'svc_live_',
        scopes: SCOPES,
      };
      const view = await s.stack.services.priceChanges.cancelPendingPrice(principal, listing.apiId, endpointId);
      expect(view).toMatchObject({ price_cents: 10, price_increase: null });
    } finally {
      temporal.cancelPriceChange = cancelRun;
    }
    const cancelledAt = Date.now();
    // Past the old effective instant, and well before either gateway's own refresh (5-10 s).
    await new Promise((r) => setTimeout(r, Math.max(SETTLE_MS, effectiveAt.getTime() - Date.now() + 100)));
    await expectBoth(consumer, { cost_cents: 10, price_cents_effective: 10 }, listing.slug);
    expect(Date.now() - cancelledAt).toBeLessThan(5_000);
  });

  it('an applied increase is charged by both gateways on the next call', async () => {
    const consumer = await consumerWith(1_000);
    const effectiveAt = new Date(Date.now() + 3_600_000);
    const { listing, endpointId } = await listingWithIncrease(effectiveAt);
    await expectBoth(consumer, { cost_cents: 10 }, listing.slug);
    // The pricing workflow's activity applies the scheduled price (here directly, as the activity does).
    expect(
      await s.stack.services.priceChanges.applyScheduledPrice({
        endpointId,
        priceCents: 25,
        effectiveAt: effectiveAt.toISOString(),
      }),
    ).toBe(true);
    const appliedAt = Date.now();
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    await expectBoth(consumer, { cost_cents: 25, price_cents_effective: 25 }, listing.slug);
    expect(Date.now() - appliedAt).toBeLessThan(1_000);
  });

  it('a billing-mode change (a card saved) lets both gateways serve an org without credit on the next call', async () => {
    const consumer = await createPerson(s.stack.services); // prepaid, no credit
    for (const gateway of gateways) expectFailure(await paidCall(gateway, consumer), 402, 'payment_required');
    // What the setup_intent.succeeded webhook commits, then announces (billing.test.ts checks that announcement).
    await s.stack.services.orm.em
      .fork()
      .execute("update orgs set billing_mode = 'card' where id = ?", [consumer.orgId]);
    await s.stack.services.gatewayEvents.orgChanged(consumer.orgId);
    const changedAt = Date.now();
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    await expectBoth(consumer);
    expect(Date.now() - changedAt).toBeLessThan(1_000);
  });

  it('an unpublished listing is gone from both gateways on the next call', async () => {
    const consumer = await consumerWith(1_000);
    const other = await createLiveApi(s.stack.services, {
      providerOrgId: s.provider.orgId,
      baseUrl: s.upstream.url,
      endpoints: [{ method: 'GET', path: '/paid', priceCents: 10 }],
    });
    for (const gateway of gateways) expect((await paidCall(gateway, consumer, other.slug)).status).toBe(200);
    await s.stack.services.providerLifecycle.setStatus(other.apiId, 'draft'); // the unpublish step of verifyAndPublishWorkflow
    const changedAt = Date.now();
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    for (const gateway of gateways) expectFailure(await paidCall(gateway, consumer, other.slug), 404, 'not_found');
    expect(Date.now() - changedAt).toBeLessThan(1_000);
  });
});
