// Card-on-file billing, provider payouts and chargebacks, against stripe-mock (through a recording proxy) with
// webhooks signed as Stripe signs them: the billing schedules exist; a threshold cycle charges what a card org owes
// (once, even when two cycles overlap) and the payment books its balance back to zero; a failed charge suspends the
// org until a payment succeeds; the period close pays providers their net earnings once as a Connect transfer; a
// dispute takes the credits back and suspends the org until an operator lifts it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callEntries } from '../../../core/money/split.js';
import { UsageCommitter } from '../../../core/spend/usage-committer.js';
import { newId } from '../../../core/ids.js';
import type { ReconciliationReport } from '../../../core/billing/reconciliation.service.js';
import { SCHEDULES, workflowIds } from '../../../core/temporal/contracts.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http } from '../../helpers/http.js';
import type { FullStack } from '../../helpers/full-stack.js';
import { startBillingStack, type Announced, type BillingStack } from '../../helpers/billing-stack.js';
import { recordHistory } from '../../helpers/temporal.js';
import { waitForCharge, type StripeRecorder } from '../../helpers/stripe-mock.js';
import { createConsumer } from '../../helpers/fixtures.js';
import { checkoutCompleted, disputeCreated, paymentFailed, paymentSucceeded } from '../../helpers/stripe-events.js';

const WEBHOOK_SECRET = 'whsec_test_billing_cycle';
const THRESHOLD = 5_000;

describe('billing cycles, payouts and chargebacks', () => {
  let billing: BillingStack;
  let s: FullStack;
  let stripe: StripeRecorder;
  let n = 0;
  const announced: Announced[] = [];

  beforeAll(async () => {
    billing = await startBillingStack(WEBHOOK_SECRET, announced, {
      USAGE_CHARGE_THRESHOLD_CENTS: String(THRESHOLD),
      PLATFORM_FEE_PERCENT: '20',
      PAYOUT_MINIMUM_CENTS: '100',
    });
    ({ s, stripe } = billing);
  });
  afterAll(async () => {
    const report = (await s?.services.reconciliation.run()) as ReconciliationReport | undefined;
    expect(report?.ok).toBe(true);
    await billing?.close();
  });

  const eventId = () => `evt_cycle_${Date.now()}_${++n}`;
  const deliver = async (event: Record<string, unknown>) => {
    const { payload, header } = billing.signed(event);
    const res = await http(s.base, 'POST', '/v1/webhooks/stripe', {
      rawBody: payload,
      headers: { 'content-type': 'application/json', 'stripe-signature': header },
    });
    expect(res.status).toBe(200);
    return res;
  };
  const org = async (orgId: string) =>
    (
      await sql<{ credit_cents: string; suspended: boolean; suspended_reason: string | null }>(
        s.db.url,
        'select credit_cents, suspended, suspended_reason from orgs where id = $1',
        [orgId],
      )
    )[0]!;
  const callsTo = (path: string, since: number) => stripe.calls.slice(since).filter((c) => c.path === path);

  /** A card-billed org that has used `owed` cents more than it had. */
  async function owingOrg(owed: number): Promise<Person> {
    const p = await createPerson(s.services);
    await sql(
      s.db.url,
      "update orgs set stripe_customer_id = $2, has_payment_method = true, default_payment_method_id = 'pm_card_visa', billing_mode = 'card' where id = $1",
      [p.orgId, `cus_cycle_${p.orgId.slice(-8)}`],
    );
    if (owed > 0) await s.services.ledger.post({ orgId: p.orgId, kind: 'usage', amountCents: -owed });
    return p;
  }

  it('the worker schedules the hourly threshold cycle and the month-end close at 00:05 UTC on the 1st', async () => {
    const hourly = await s.temporal.client.schedule.getHandle(SCHEDULES.billingThreshold.id).describe();
    expect(hourly.action).toMatchObject({ type: 'startWorkflow', workflowType: 'billingCycleWorkflow' });
    expect(hourly.spec.intervals?.[0]?.every).toBe(3_600_000);
    const close = await s.temporal.client.schedule.getHandle(SCHEDULES.billingPeriodClose.id).describe();
    expect(close.action).toMatchObject({ type: 'startWorkflow', workflowType: 'billingCycleWorkflow' });
    expect(close.action.type === 'startWorkflow' && close.action.args).toEqual([{ reason: 'period_end' }]);
    const next = close.info.nextActionTimes.slice(0, 3);
    expect(next.length).toBeGreaterThan(0);
    for (const at of next) {
      expect([at.getUTCDate(), at.getUTCHours(), at.getUTCMinutes()]).toEqual([1, 0, 5]);
    }
  });

  it('a threshold cycle charges what a card org owes once, and the payment books it back to zero', async () => {
    const debtor = await owingOrg(6_000);
    const small = await owingOrg(700); // under the threshold: waits for the month end
    const before = stripe.calls.length;
    // Two cycles at once (the hourly schedule and an operator's run): one charge per org.
    const ids = ['billing-cycle:threshold:first', 'billing-cycle:threshold:second'] as const;
    const [a, b] = await Promise.all([
      s.services.temporal.runBillingCycle({ reason: 'threshold' }, ids[0]),
      s.services.temporal.runBillingCycle({ reason: 'threshold' }, ids[1]),
    ]);
    const started = [...a.usageChargesStarted, ...b.usageChargesStarted].filter((o) => o === debtor.orgId);
    const running = [...a.usageChargesAlreadyRunning, ...b.usageChargesAlreadyRunning].filter(
      (o) => o === debtor.orgId,
    );
    expect(started.length).toBeGreaterThanOrEqual(1);
    expect(started.length + running.length).toBe(2);
    expect([...a.usageChargesStarted, ...b.usageChargesStarted]).not.toContain(small.orgId);
    if (a.usageChargesStarted.includes(debtor.orgId) !== b.usageChargesStarted.includes(debtor.orgId)) {
      // One cycle started the org's charge, the other found it running: each path's history is replayed.
      const [starter, latecomer] = a.usageChargesStarted.includes(debtor.orgId) ? ids : [ids[1], ids[0]];
      await recordHistory(s.temporal.address, starter, 'billing-cycle-threshold-started.json');
      await recordHistory(s.temporal.address, latecomer, 'billing-cycle-threshold-already-running.json');
    }

    const handle = s.temporal.client.workflow.getHandle(workflowIds.usageCharge(debtor.orgId));
    await waitForCharge(s.db.url, debtor.orgId, 'usage_charge');
    const intents = callsTo('/v1/payment_intents', before).filter((c) => c.params['metadata[org_id]'] === debtor.orgId);
    expect(intents[0]?.params).toMatchObject({
      amount: '6000',
      currency: 'usd',
      off_session: 'true',
      confirm: 'true',
      payment_method: 'pm_card_visa',
      'metadata[kind]': 'usage_charge',
    });
    expect(intents[0]?.idempotencyKey).toMatch(new RegExp(`^usage-charge:${debtor.orgId}:[0-9a-f-]+:charge$`));
    const payments = await sql<{ id: string; stripe_ref: string }>(
      s.db.url,
      "select id, stripe_ref from payments where org_id = $1 and kind = 'usage_charge'",
      [debtor.orgId],
    );
    // Overlapping cycles may both reach the running workflow, never a second payment.
    expect(payments).toHaveLength(1);
    const payment = payments[0]!;
    const event = paymentSucceeded(eventId(), payment, 6000);
    await deliver(event);
    await deliver(event); // a duplicate delivery changes nothing
    expect(await handle.result()).toEqual({ outcome: 'charged', paymentId: payment.id });
    await recordHistory(s.temporal.address, workflowIds.usageCharge(debtor.orgId), 'usage-charge-charged.json');
    expect(await org(debtor.orgId)).toMatchObject({ credit_cents: '0', suspended: false });
    const balance = await http(s.base, 'GET', '/v1/billing/balance', { token: debtor.apiKey });
    expect(balance.body.data).toMatchObject({ credit_cents: 0, billing_mode: 'card' });

    // The month end picks up the small debt the threshold left alone.
    const close = await s.services.temporal.runBillingCycle({ reason: 'period_end', period: '2026-10' });
    expect(close.usageChargesStarted).toContain(small.orgId);
    expect(close.usageChargesStarted).not.toContain(debtor.orgId);
    await expect
      .poll(() => callsTo('/v1/payment_intents', before).filter((c) => c.params['metadata[org_id]'] === small.orgId), {
        timeout: 15_000,
      })
      .toHaveLength(1);
    expect(
      callsTo('/v1/payment_intents', before).find((c) => c.params['metadata[org_id]'] === small.orgId)?.params.amount,
    ).toBe('700');
  });

  it('a failed usage charge suspends the org and mails its owner; the next successful payment lifts it', async () => {
    const debtor = await owingOrg(5_500);
    const result = await s.services.temporal.runBillingCycle({ reason: 'threshold' });
    expect(result, JSON.stringify(result)).toMatchObject({
      usageChargesStarted: expect.arrayContaining([debtor.orgId]),
    });
    const payment = await waitForCharge(s.db.url, debtor.orgId, 'usage_charge');
    await deliver(paymentFailed(eventId(), payment, 5500, 'Your card has insufficient funds.'));
    const handle = s.temporal.client.workflow.getHandle(workflowIds.usageCharge(debtor.orgId));
    expect(await handle.result()).toEqual({
      outcome: 'failed',
      paymentId: payment.id,
      reason: 'Your card has insufficient funds.',
    });
    await recordHistory(s.temporal.address, workflowIds.usageCharge(debtor.orgId), 'usage-charge-failed.json');
    expect(await org(debtor.orgId)).toEqual({
      credit_cents: '-5500',
      suspended: true,
      suspended_reason: 'payment_failed',
    });
    await expect
      .poll(() => announced.some((a) => a.orgId === debtor.orgId && a.suspended && a.reason === 'payment_failed'))
      .toBe(true);
    const mail = await s.smtp.waitForMail(debtor.email, { subject: /Payment failed/ });
    expect(mail.text).toContain('$55.00');
    expect(mail.text).toContain('Your card has insufficient funds.');
    expectFailure(
      await http(s.base, 'POST', '/v1/keys', { token: debtor.session, body: { name: 'x' } }),
      403,
      'forbidden',
    );
    const balance = await http(s.base, 'GET', '/v1/billing/balance', { token: debtor.apiKey });
    expect(balance.body.data).toMatchObject({ suspended: true });

    // The threshold cycle leaves a suspended org alone (no hourly retries of a declined card)...
    expect((await s.services.temporal.runBillingCycle({ reason: 'threshold' })).usageChargesStarted).not.toContain(
      debtor.orgId,
    );
    // ...the month end retries the debt, and its success lifts the suspension.
    const announcedBeforeLift = announced.length;
    const close = await s.services.temporal.runBillingCycle({ reason: 'period_end', period: '2026-10' });
    expect(close.usageChargesStarted).toContain(debtor.orgId);
    const retry = await waitForCharge(s.db.url, debtor.orgId, 'usage_charge', 'pending');
    await deliver(paymentSucceeded(eventId(), { stripe_ref: retry.stripe_ref }, 5500));
    expect(await handle.result()).toEqual({ outcome: 'charged', paymentId: retry.id });
    expect(await org(debtor.orgId)).toEqual({ credit_cents: '0', suspended: false, suspended_reason: null });
    // The automatic lift is announced too (by the webhook that booked the payment, after its commit).
    await expect
      .poll(() => announced.slice(announcedBeforeLift).some((a) => a.orgId === debtor.orgId && !a.suspended))
      .toBe(true);
  });

  it('the period close pays each provider its net earnings once, as a Connect transfer', async () => {
    const provider = await createPerson(s.services);
    const consumer = await createPerson(s.services);
    await sql(s.db.url, "update orgs set stripe_account_id = $2, connect_status = 'enabled' where id = $1", [
      provider.orgId,
      `acct_${provider.orgId.slice(-10)}`,
    ]);
    await s.services.ledger.post({ orgId: consumer.orgId, kind: 'grant', amountCents: 1_000 });
    // 40 calls at 5 cents (fee 1 cent each) and 30 at 1 cent (fee rounds to 0): gross 230, fees 40, net 190.
    const prices = [...Array<number>(40).fill(5), ...Array<number>(30).fill(1)];
    for (const priceCents of prices) {
      const usageId = newId('usage');
      for (const entry of callEntries({
        usageId,
        consumerOrgId: consumer.orgId,
        providerOrgId: provider.orgId,
        priceCents,
        feePercent: 20,
      })) {
        await s.services.ledger.post(entry);
      }
    }
    const before = stripe.calls.length;
    const first = await s.services.temporal.runBillingCycle(
      { reason: 'period_end', period: '2026-10' },
      'billing-cycle:period_end:payouts',
    );
    expect(first.payouts).toContainEqual({ orgId: provider.orgId, status: 'paid', amountCents: 190 });
    await recordHistory(s.temporal.address, 'billing-cycle:period_end:payouts', 'billing-cycle-period-close.json');
    const transfers = callsTo('/v1/transfers', before);
    expect(transfers).toHaveLength(1);
    expect(transfers[0]).toMatchObject({
      idempotencyKey: `payout:${provider.orgId}:2026-10`,
      params: { amount: '190', currency: 'usd', destination: `acct_${provider.orgId.slice(-10)}` },
    });
    // A second run of the same period pays nothing more.
    const again = await s.services.temporal.runBillingCycle({ reason: 'period_end', period: '2026-10' });
    expect(again.payouts).toContainEqual({ orgId: provider.orgId, status: 'paid', amountCents: 190 });
    expect(callsTo('/v1/transfers', before)).toHaveLength(1);
    expect(await org(provider.orgId)).toMatchObject({ credit_cents: '0' });

    const analytics = await http(s.base, 'GET', '/v1/provider/analytics', { token: provider.session });
    expect(analytics.body.data.totals).toMatchObject({
      provider_earnings_cents: 230,
      platform_fee_cents: 40,
      net_earnings_cents: 190,
      payouts_cents: 190,
    });
    expect(await org(consumer.orgId)).toMatchObject({ credit_cents: String(1_000 - 230) });
    const report = await s.services.reconciliation.run();
    expect(report).toMatchObject({ ok: true, unmatched_calls: [] });
  });

  it('a refused transfer is marked failed and its amount returns to the balance for the next period', async () => {
    const provider = await createPerson(s.services);
    await sql(
      s.db.url,
      "update orgs set stripe_account_id = 'acct_refused', connect_status = 'enabled' where id = $1",
      [provider.orgId],
    );
    const consumer = await createConsumer(s.services, 500);
    for (const entry of callEntries({
      usageId: newId('usage'),
      consumerOrgId: consumer.orgId,
      providerOrgId: provider.orgId,
      priceCents: 250,
      feePercent: 20,
    })) {
      await s.services.ledger.post(entry);
    }
    stripe.failNext('/v1/transfers', 400, {
      type: 'invalid_request_error',
      message: 'You have insufficient available funds in your Stripe account.',
      code: 'balance_insufficient',
    });
    const failed = await s.services.payouts.payOut({ orgId: provider.orgId, period: '2026-09' });
    expect(failed).toMatchObject({ status: 'failed', amountCents: 200 });
    expect(await org(provider.orgId)).toMatchObject({ credit_cents: '200' });
    const next = await s.services.payouts.payOut({ orgId: provider.orgId, period: '2026-10' });
    expect(next).toMatchObject({ status: 'paid', amountCents: 200 });
    expect(await org(provider.orgId)).toMatchObject({ credit_cents: '0' });
  });

  it('earnings are payable once the consumer paid: card-billed calls after their usage charge; a chargeback reverses them', async () => {
    const provider = await createPerson(s.services);
    await sql(s.db.url, "update orgs set stripe_account_id = $2, connect_status = 'enabled' where id = $1", [
      provider.orgId,
      `acct_${provider.orgId.slice(-10)}`,
    ]);
    const prepaid = await createConsumer(s.services, 1_000);
    const card = await owingOrg(0);
    const committer = new UsageCommitter({ orm: s.services.orm, logger: s.services.logger, feePercent: 20 });
    const callBy = (p: Person, priceCents: number) =>
      committer.commit({
        usageId: newId('usage'),
        orgId: p.orgId,
        keyId: p.keyId,
        apiId: 'api_payable',
        apiSlug: 'payable',
        endpointId: 'end_payable',
        providerOrgId: provider.orgId,
        method: 'GET',
        path: '/x',
        status: 200,
        outcome: 'success',
        priceCents,
        priceCentsEffective: priceCents,
        latencyMs: 1,
        idempotencyKey: null,
        requestId: newId('request'),
        day: new Date().toISOString().slice(0, 10),
        at: new Date(),
      });
    // Prepaid: 2 calls of 100 (net 80 each), collected at once. Card: 2 calls of 2,500 (net 2,000 each), owed.
    for (const c of [callBy(prepaid, 100), callBy(prepaid, 100), callBy(card, 2_500), callBy(card, 2_500)]) await c;
    await s.services.earnings.foldAll();
    expect(await s.services.payouts.unpaidEarnings(provider.orgId)).toBe(160);
    expect(await s.services.payouts.payOut({ orgId: provider.orgId, period: '2026-06' })).toMatchObject({
      status: 'paid',
      amountCents: 160,
    });

    // The card org's usage charge succeeds: its calls' earnings become payable.
    await s.services.temporal.runBillingCycle({ reason: 'threshold' });
    const payment = await waitForCharge(s.db.url, card.orgId, 'usage_charge');
    await deliver(paymentSucceeded(eventId(), payment, 5_000));
    await expect.poll(() => s.services.payouts.unpaidEarnings(provider.orgId), { timeout: 15_000 }).toBe(4_000);
    expect(await s.services.payouts.payOut({ orgId: provider.orgId, period: '2026-07' })).toMatchObject({
      status: 'paid',
      amountCents: 4_000,
    });
    expect(await org(provider.orgId)).toMatchObject({ credit_cents: '0' });

    // The card holder disputes that charge after the payout: the provider's share is reversed and carried negative.
    const dispute = disputeCreated(eventId(), {
      id: `dp_earn_${card.orgId.slice(-8)}`,
      amount: 5_000,
      payment_intent: payment.stripe_ref,
    });
    await deliver(dispute);
    await deliver({ ...dispute, id: eventId() });
    const reversals = await sql(
      s.db.url,
      "select amount_cents, idempotency_key from ledger_entries where org_id = $1 and kind = 'chargeback'",
      [provider.orgId],
    );
    expect(reversals).toEqual([
      {
        amount_cents: '-4000',
        idempotency_key: `dispute:dp_earn_${card.orgId.slice(-8)}:earnings`,
      },
    ]);
    expect(await org(provider.orgId)).toMatchObject({ credit_cents: '-4000' });
    expect(await s.services.payouts.unpaidEarnings(provider.orgId)).toBe(-4_000);
    // Later earnings pay the debt off before anything is paid out again.
    await callBy(prepaid, 100);
    await s.services.earnings.foldAll();
    expect(await org(provider.orgId)).toMatchObject({ credit_cents: '-3920' });
    expect(await s.services.payouts.payOut({ orgId: provider.orgId, period: '2026-08' })).toMatchObject({
      status: 'skipped',
    });
    await committer.flush();
  });

  it('a dispute takes the credits back once and suspends the org until an operator lifts it', async () => {
    const p = await createConsumer(s.services, 100);
    const checkout = await http(s.base, 'POST', '/v1/billing/checkout', {
      token: p.session,
      body: { pack: 'starter' },
    });
    expect(checkout.status).toBe(200);
    const sessionId = checkout.body.data.checkout_session_id as string;
    const intentId = `pi_disputed_${p.orgId.slice(-8)}`;
    await deliver(
      checkoutCompleted(eventId(), { id: sessionId, org_id: p.orgId, credit_cents: '500', payment_intent: intentId }),
    );
    expect(await org(p.orgId)).toMatchObject({ credit_cents: '600' });
    await s.services.ledger.post({ orgId: p.orgId, kind: 'usage', amountCents: -450 }); // 150 left
    const dispute = disputeCreated(eventId(), {
      id: `dp_${p.orgId.slice(-8)}`,
      amount: 500,
      payment_intent: intentId,
      reason: 'fraudulent',
    });
    await deliver(dispute);
    await deliver({ ...dispute, id: eventId() }); // Stripe may also resend under a new event id
    // A prepaid balance cannot go negative: what is left is taken back, once.
    expect(await org(p.orgId)).toEqual({ credit_cents: '0', suspended: true, suspended_reason: 'chargeback' });
    // The gateways were told after the dispute committed (each answers the org's next call from Postgres).
    await expect
      .poll(() => announced.some((a) => a.orgId === p.orgId && a.suspended && a.reason === 'chargeback'))
      .toBe(true);
    const rows = await sql(
      s.db.url,
      "select amount_cents from ledger_entries where org_id = $1 and kind = 'chargeback'",
      [p.orgId],
    );
    expect(rows).toEqual([{ amount_cents: '-150' }]);

    // Paying again does not lift a chargeback suspension.
    const again = await http(s.base, 'POST', '/v1/billing/checkout', { token: p.session, body: { pack: 'starter' } });
    const sessionAgain = again.body.data.checkout_session_id as string;
    await deliver(checkoutCompleted(eventId(), { id: sessionAgain, org_id: p.orgId, credit_cents: '500' }));
    expect(await org(p.orgId)).toEqual({ credit_cents: '500', suspended: true, suspended_reason: 'chargeback' });
    // A dispute of somebody else's payment is acknowledged and ignored.
    const other = await deliver(
      disputeCreated(eventId(), { id: 'dp_other', amount: 100, payment_intent: 'pi_not_ours' }),
    );
    expect(other.body.data.outcome).toBe('not ours; ignored');
  });
});
