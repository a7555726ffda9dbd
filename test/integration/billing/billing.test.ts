// Billing against stripe-mock (through a recording proxy, so the tests see what we sent) with webhooks signed the way
// Stripe signs them: checkout credits once however often its event arrives, bad signatures and timestamps are refused,
// a saved card switches the org to card billing, and auto-reload charges off-session, credits, or suspends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../../core/auth/scopes.js';
import { workflowIds } from '../../../core/temporal/contracts.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, describe as show } from '../../helpers/http.js';
import type { FullStack } from '../../helpers/full-stack.js';
import { startBillingStack, type Announced, type BillingStack } from '../../helpers/billing-stack.js';
import { recordHistory } from '../../helpers/temporal.js';
import { checkoutCompleted, paymentFailed, paymentSucceeded } from '../../helpers/stripe-events.js';
import { NEW_ORG_BALANCE } from '../../helpers/fixtures.js';
import { waitForCharge, type StripeRecorder } from '../../helpers/stripe-mock.js';

const WEBHOOK_SECRET = 'whsec_test_marketplace';
describe('billing', () => {
  let billing: BillingStack;
  let s: FullStack;
  let stripe: StripeRecorder;
  let person: Person;
  let n = 0;
  const announced: Announced[] = [];
  const signed = (event: Record<string, unknown>, timestamp?: number) => billing.signed(event, timestamp);

  beforeAll(async () => {
    billing = await startBillingStack(WEBHOOK_SECRET, announced);
    ({ s, stripe } = billing);
    person = await createPerson(s.services);
  });
  afterAll(async () => {
    expect(await s.services.ledger.findDrift()).toEqual([]);
    await billing?.close();
  });

  const deliver = (payload: string, header?: string) =>
    http(s.base, 'POST', '/v1/webhooks/stripe', {
      rawBody: payload,
      headers: { 'content-type': 'application/json', ...(header ? { 'stripe-signature': header } : {}) },
    });
  const balance = async (orgId: string) =>
    Number(
      (await sql<{ credit_cents: string }>(s.db.url, 'select credit_cents from orgs where id = $1', [orgId]))[0]!
        .credit_cents,
    );
  const eventId = () => `evt_test_${Date.now()}_${++n}`;

  it('shows the balance and the packs to any credential of the org', async () => {
    const res = await http(s.base, 'GET', '/v1/billing/balance', { token: person.apiKey });
    expect(res.body.data).toEqual(NEW_ORG_BALANCE);
    const packs = await http(s.base, 'GET', '/v1/billing/packs', { token: person.apiKey });
    expect(packs.body.data.map((p: { name: string }) => p.name)).toEqual(['starter', 'builder', 'scale']);
  });

  it('creates a Stripe Checkout Session carrying org_id and credit_cents', async () => {
    const before = stripe.calls.length;
    const res = await http(s.base, 'POST', '/v1/billing/checkout', {
      token: person.session,
      body: { pack: 'builder' },
    });
    expect(res.status, show(res)).toBe(200);
    expect(res.body.data).toMatchObject({
      checkout_url: expect.stringMatching(/^https:\/\/checkout\.stripe\.com\//),
      checkout_session_id: expect.stringMatching(/^cs_/),
      amount_cents: 2000,
      credit_cents: 2100,
    });
    const calls = stripe.calls.slice(before);
    const customer = calls.find((c) => c.path === '/v1/customers');
    expect(customer).toMatchObject({
      method: 'POST',
      idempotencyKey: `customer:${person.orgId}`,
      params: { 'metadata[org_id]': person.orgId },
    });
    const session = calls.find((c) => c.path === '/v1/checkout/sessions')!;
    expect(session.params).toMatchObject({
      mode: 'payment',
      'metadata[org_id]': person.orgId,
      'metadata[credit_cents]': '2100',
      'line_items[0][price_data][unit_amount]': '2000',
      'line_items[0][price_data][currency]': 'usd',
      'payment_intent_data[metadata][org_id]': person.orgId,
      client_reference_id: person.orgId,
    });
    expect(session.params.success_url).toMatch(/\/billing\/return\?status=success&session_id=\{CHECKOUT_SESSION_ID\}$/);
    expect(session.params.cancel_url).toMatch(/\/billing\/return\?status=cancel$/);
    // The customer is created once.
    await http(s.base, 'POST', '/v1/billing/checkout', {
      token: person.session,
      body: { amount_cents: 750, success_url: 'https://app.example/ok', cancel_url: 'https://app.example/no' },
    });
    expect(stripe.calls.slice(before).filter((c) => c.path === '/v1/customers')).toHaveLength(1);
    expect(stripe.calls.at(-1)!.params).toMatchObject({
      success_url: 'https://app.example/ok',
      'metadata[credit_cents]': '750',
    });
  });

  it("a Stripe refusal of our own credentials is the operator's 502 payment_provider_error, never the caller's 401", async () => {
    // What the live API (and stripe-mock) answer for a secret key they do not accept.
    const badKey = { type: 'invalid_request_error', message: 'Invalid API Key provided: sk_test_***' };
    stripe.failNext('/v1/checkout/sessions', 401, badKey);
    const res = await http(s.base, 'POST', '/v1/billing/checkout', {
      token: person.session,
      body: { pack: 'starter' },
    });
    expectFailure(res, 502, 'payment_provider_error');
    expect(res.body.error.message).not.toMatch(/bearer token|Invalid API Key/);

    // The console shows a page saying so (never the raw JSON envelope).
    const cookie = `svc_session=${person.session}`;
    const page = await fetch(`${s.base}/console/billing`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const csrfCookie = page.headers.getSetCookie().map((c) => c.split(';')[0]!);
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
    stripe.failNext('/v1/checkout/sessions', 401, badKey);
    const buy = await fetch(`${s.base}/console/billing/checkout`, {
      method: 'POST',
      headers: { cookie: [cookie, ...csrfCookie].join('; '), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, pack: 'starter' }).toString(),
      redirect: 'manual',
    });
    expect(buy.status, await buy.clone().text()).toBe(502);
    expect(buy.headers.get('content-type')).toContain('text/html');
    const html = await buy.text();
    expect(html).toContain('The payment provider refused this request');
    expect(html).not.toContain('"ok":false');
  });

  it('refuses checkout to a bare key and to a session without billing:write, and bad bodies with 400', async () => {
    const bare = await createPerson(s.services, {
      scopes: SCOPES.filter((x) => x !== 'billing:write' && x !== 'provider:write'),
    });
    const res = await http(s.base, 'POST', '/v1/billing/checkout', { token: bare.apiKey, body: { pack: 'starter' } });
    expectFailure(res, 403, 'forbidden');
    expect(res.body.error.details).toEqual({ missing_scope: 'billing:write' });
    const unverified = await createPerson(s.services, { verified: false });
    expectFailure(
      await http(s.base, 'POST', '/v1/billing/checkout', { token: unverified.session, body: { pack: 'starter' } }),
      403,
      'forbidden',
    );
    for (const body of [
      {},
      { pack: 'mega' },
      { amount_cents: 499 },
      { amount_cents: 100_001 },
      { pack: 'starter', amount_cents: 600 },
      { pack: 'starter', success_url: 'javascript:x' },
      { pack: 'starter', org_id: 'x' },
    ]) {
      expectFailure(
        await http(s.base, 'POST', '/v1/billing/checkout', { token: person.session, body }),
        400,
        'validation_failed',
      );
    }
  });

  it('credits a completed checkout once, however many times (and however concurrently) the event arrives', async () => {
    const started = await http(s.base, 'POST', '/v1/billing/checkout', {
      token: person.session,
      body: { pack: 'starter' },
    });
    const sessionId = started.body.data.checkout_session_id as string;
    const before = await balance(person.orgId);
    const { payload, header } = signed(
      checkoutCompleted(eventId(), { id: sessionId, org_id: person.orgId, credit_cents: '500', amount_total: 500 }),
    );
    const first5 = await Promise.all(Array.from({ length: 5 }, () => deliver(payload, header)));
    const next5 = [];
    for (let i = 0; i < 5; i++) next5.push(await deliver(payload, header));
    const all = [...first5, ...next5];
    expect(all.every((r) => r.status === 200)).toBe(true);
    expect(all.filter((r) => r.body.data.duplicate === false)).toHaveLength(1);
    expect(await balance(person.orgId)).toBe(before + 500);
    const rows = await sql(
      s.db.url,
      "select kind, amount_cents from ledger_entries where org_id = $1 and kind = 'purchase' and reference = $2",
      [person.orgId, `stripe:${sessionId}`],
    );
    expect(rows).toEqual([{ kind: 'purchase', amount_cents: '500' }]);
    const [payment] = await sql(s.db.url, 'select status from payments where stripe_ref = $1', [sessionId]);
    expect(payment).toEqual({ status: 'succeeded' });
  });

  it('refuses tampered, unsigned, 301-second-old and 301-second-future events with 400, changing nothing', async () => {
    const before = await balance(person.orgId);
    const event = checkoutCompleted(eventId(), { id: 'cs_test_forged', org_id: person.orgId, credit_cents: '100000' });
    const good = signed(event);
    const tampered = good.payload.replace('"credit_cents":"100000"', '"credit_cents":"999999"');
    expectFailure(await deliver(tampered, good.header), 400, 'validation_failed');
    expectFailure(await deliver(good.payload), 400, 'validation_failed');
    expectFailure(await deliver(good.payload, 't=1,v1=deadbeef'), 400, 'validation_failed');
    const now = Math.floor(Date.now() / 1000);
    const old = signed(event, now - 301);
    expectFailure(await deliver(old.payload, old.header), 400, 'validation_failed');
    const future = signed(event, now + 301);
    const res = await deliver(future.payload, future.header);
    expectFailure(res, 400, 'validation_failed');
    expect(res.body.error.message).toMatch(/future/);
    expect(await balance(person.orgId)).toBe(before);
    const [row] = await sql<{ n: string }>(s.db.url, 'select count(*) as n from stripe_events where id = $1', [
      event.id,
    ]);
    expect(row?.n).toBe('0');
  });

  it('acknowledges unknown events and ignores them', async () => {
    const { payload, header } = signed({ id: eventId(), type: 'invoice.finalized', data: { object: { id: 'in_1' } } });
    const res = await deliver(payload, header);
    expect(res.body.data).toMatchObject({ received: true, duplicate: false, outcome: 'ignored' });
  });

  it('card setup and portal reach Stripe with the customer; a saved card switches the org to card billing', async () => {
    const before = stripe.calls.length;
    const setup = await http(s.base, 'POST', '/v1/billing/setup-intent', { token: person.session });
    expect(setup.status, show(setup)).toBe(200);
    expect(setup.body.data).toEqual({
      setup_intent_id: expect.stringMatching(/^seti_/),
      client_secret: expect.stringMatching(/^seti_.+_secret_/),
      url: expect.stringMatching(/^https:/),
      checkout_session_id: expect.stringMatching(/^cs_/),
      expires_at: expect.any(String),
    });
    const calls = stripe.calls.slice(before);
    const customer = (
      await sql<{ stripe_customer_id: string }>(s.db.url, 'select stripe_customer_id from orgs where id = $1', [
        person.orgId,
      ])
    )[0]!.stripe_customer_id;
    // One SetupIntent only: the hosted page's own (returned expanded with the session), never a second, orphan one.
    expect(calls.filter((c) => c.path.startsWith('/v1/setup_intents'))).toEqual([]);
    const sessions = calls.filter((c) => c.path === '/v1/checkout/sessions');
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.params).toMatchObject({
      mode: 'setup',
      customer,
      'expand[0]': 'setup_intent',
      'setup_intent_data[metadata][org_id]': person.orgId,
    });
    const portal = await http(s.base, 'POST', '/v1/billing/portal', { token: person.session });
    expect(portal.body.data.url).toMatch(/^https:/);
    expect(stripe.calls.at(-1)).toMatchObject({
      path: '/v1/billing_portal/sessions',
      params: { customer, return_url: expect.stringMatching(/\/billing\/return\?status=portal$/) },
    });

    expectFailure(
      await http(s.base, 'POST', '/v1/billing/auto-reload', {
        token: person.session,
        body: { enabled: true, threshold_cents: 100, amount_cents: 500 },
      }),
      409,
      'conflict',
    );
    const { payload, header } = signed({
      id: eventId(),
      type: 'setup_intent.succeeded',
      data: {
        object: {
          id: 'seti_x',
          object: 'setup_intent',
          customer,
          payment_method: 'pm_card_visa',
          metadata: { org_id: person.orgId },
        },
      },
    });
    expect((await deliver(payload, header)).body.data.outcome).toBe('payment method saved');
    await expect // the gateways are told, once the card billing is committed
      .poll(() => announced.some((a) => a.orgId === person.orgId && a.mode === 'card'))
      .toBe(true);
    const bal = await http(s.base, 'GET', '/v1/billing/balance', { token: person.apiKey });
    expect(bal.body.data).toMatchObject({ has_payment_method: true, billing_mode: 'card' });
    const enabled = await http(s.base, 'POST', '/v1/billing/auto-reload', {
      token: person.session,
      body: { enabled: true, threshold_cents: 100, amount_cents: 500 },
    });
    expect(enabled.body.data).toEqual({ auto_reload_enabled: true, threshold_cents: 100, amount_cents: 500 });
    expectFailure(
      await http(s.base, 'POST', '/v1/billing/auto-reload', { token: person.session, body: { enabled: true } }),
      400,
      'validation_failed',
    );
  });

  async function cardOrg(): Promise<Person> {
    const p = await createPerson(s.services);
    await sql(
      s.db.url,
      "update orgs set stripe_customer_id = $2, has_payment_method = true, default_payment_method_id = 'pm_card_visa', billing_mode = 'card', auto_reload_enabled = true, auto_reload_threshold_cents = 100, auto_reload_amount_cents = 500 where id = $1",
      [p.orgId, `cus_test_${p.orgId.slice(-8)}`],
    );
    await s.services.ledger.post({ orgId: p.orgId, kind: 'grant', amountCents: 150 });
    return p;
  }

  it('auto-reloads when a debit crosses the threshold: one off-session charge, then the credit', async () => {
    const p = await cardOrg();
    const before = stripe.calls.length;
    await s.services.ledger.post({ orgId: p.orgId, kind: 'usage', amountCents: -60 }); // 150 -> 90, under 100
    await expect
      .poll(() => stripe.calls.slice(before).find((c) => c.path === '/v1/payment_intents'), { timeout: 15_000 })
      .toBeTruthy();
    const charge = stripe.calls.slice(before).find((c) => c.path === '/v1/payment_intents')!;
    expect(charge.params).toMatchObject({
      amount: '500',
      currency: 'usd',
      off_session: 'true',
      confirm: 'true',
      payment_method: 'pm_card_visa',
      'metadata[org_id]': p.orgId,
      'metadata[kind]': 'auto_reload',
    });
    expect(charge.idempotencyKey).toMatch(new RegExp(`^reload:${p.orgId}:[0-9a-f-]+:charge$`));
    // The mock answers "not final yet"; Stripe's webhook settles it (once the activity has saved the intent id).
    const payment = await waitForCharge(s.db.url, p.orgId, 'auto_reload');
    const { payload, header } = signed(paymentSucceeded(eventId(), payment, 500, { org_id: p.orgId }));
    expect((await deliver(payload, header)).status).toBe(200);
    const result = await s.temporal.client.workflow.getHandle(workflowIds.autoReload(p.orgId)).result();
    expect(result).toEqual({ outcome: 'credited', paymentId: payment.id });
    await recordHistory(s.temporal.address, workflowIds.autoReload(p.orgId), 'auto-reload-credited.json');
    expect(await balance(p.orgId)).toBe(590);
    expect(stripe.calls.slice(before).filter((c) => c.path === '/v1/payment_intents')).toHaveLength(1);
  });

  it('suspends the org and mails the owner when the reload charge fails; a later payment lifts it', async () => {
    const p = await cardOrg();
    await s.services.ledger.post({ orgId: p.orgId, kind: 'usage', amountCents: -100 });
    const payment = await waitForCharge(s.db.url, p.orgId, 'auto_reload');
    const failed = signed(paymentFailed(eventId(), payment, 500, 'Your card was declined.'));
    expect((await deliver(failed.payload, failed.header)).status).toBe(200);
    const result = await s.temporal.client.workflow.getHandle(workflowIds.autoReload(p.orgId)).result();
    expect(result).toEqual({ outcome: 'failed', paymentId: payment.id, reason: 'Your card was declined.' });
    await recordHistory(s.temporal.address, workflowIds.autoReload(p.orgId), 'auto-reload-failed.json');
    const [org] = await sql(s.db.url, 'select suspended, suspended_reason, credit_cents from orgs where id = $1', [
      p.orgId,
    ]);
    expect(org).toEqual({ suspended: true, suspended_reason: 'payment_failed', credit_cents: '50' });
    // Both the suspension and (below) its lift are announced to the gateways once committed.
    await expect
      .poll(() => announced.some((a) => a.orgId === p.orgId && a.suspended && a.reason === 'payment_failed'))
      .toBe(true);
    const announcedBeforeLift = announced.length;
    const mail = await s.smtp.waitForMail(p.email, { subject: /Auto-reload failed/ });
    expect(mail.text).toContain('Your card was declined.');
    expectFailure(await http(s.base, 'POST', '/v1/keys', { token: p.session, body: { name: 'x' } }), 403, 'forbidden');

    const checkout = await http(s.base, 'POST', '/v1/billing/checkout', {
      token: p.session,
      body: { pack: 'starter' },
    });
    const sessionId = checkout.body.data.checkout_session_id as string;
    const paid = signed(checkoutCompleted(eventId(), { id: sessionId, org_id: p.orgId, credit_cents: '500' }));
    await deliver(paid.payload, paid.header);
    const [after] = await sql(s.db.url, 'select suspended, suspended_reason from orgs where id = $1', [p.orgId]);
    expect(after).toEqual({ suspended: false, suspended_reason: null });
    await expect
      .poll(() => announced.slice(announcedBeforeLift).some((a) => a.orgId === p.orgId && !a.suspended))
      .toBe(true);
  });

  it('signals a waiting workflow only once the event has committed: never for a rolled-back delivery', async () => {
    const p = await cardOrg();
    await s.services.ledger.post({ orgId: p.orgId, kind: 'usage', amountCents: -100 });
    const payment = await waitForCharge(s.db.url, p.orgId, 'auto_reload');
    const handle = s.temporal.client.workflow.getHandle(workflowIds.autoReload(p.orgId));
    const event = paymentFailed(eventId(), payment, 500, 'Do not honor.');
    // A fault planted after the event's effects: recording its outcome fails, so the whole transaction rolls back.
    await sql(
      s.db.url,
      `create or replace function planted_stripe_event_fault() returns trigger language plpgsql as
         $$ begin raise exception 'planted fault for %', new.id; end $$`,
    );
    await sql(
      s.db.url,
      `create trigger planted_stripe_event_fault before update on stripe_events for each row
         when (new.id = '${event.id}') execute function planted_stripe_event_fault()`,
    );
    try {
      const { payload, header } = signed(event);
      const refused = await deliver(payload, header);
      expect(refused.status, show(refused)).toBe(500);
    } finally {
      await sql(s.db.url, 'drop trigger planted_stripe_event_fault on stripe_events');
    }
    const signalsSeen = async () =>
      (await handle.fetchHistory()).events?.filter(
        (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'paymentSettled',
      ).length ?? 0;
    expect(await signalsSeen()).toBe(0);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const [rolledBack] = await sql(s.db.url, 'select status from payments where id = $1', [payment.id]);
    expect(rolledBack).toEqual({ status: 'pending' });
    expect(await sql(s.db.url, 'select id from stripe_events where id = $1', [event.id])).toEqual([]);

    // Stripe delivers it again; this time it commits, and then the workflow hears of it.
    const { payload, header } = signed(event);
    expect((await deliver(payload, header)).status).toBe(200);
    expect(await handle.result()).toEqual({ outcome: 'failed', paymentId: payment.id, reason: 'Do not honor.' });
    expect(await signalsSeen()).toBe(1);
    const [org] = await sql(s.db.url, 'select suspended, suspended_reason from orgs where id = $1', [p.orgId]);
    expect(org).toEqual({ suspended: true, suspended_reason: 'payment_failed' });
  });

  it('a retried charge activity never charges twice (same idempotency key, one Stripe call)', async () => {
    const p = await cardOrg();
    await sql(s.db.url, 'update orgs set auto_reload_threshold_cents = 1000 where id = $1', [p.orgId]);
    const key = `reload:${p.orgId}:retry-test:charge`;
    const before = stripe.calls.length;
    const first = await s.services.charges.chargeForReload({ orgId: p.orgId, idempotencyKey: key });
    const second = await s.services.charges.chargeForReload({ orgId: p.orgId, idempotencyKey: key });
    expect(second).toEqual(first);
    const charges = stripe.calls.slice(before).filter((c) => c.path === '/v1/payment_intents');
    expect(charges).toHaveLength(1);
    expect(charges[0]!.idempotencyKey).toBe(key);
    const [row] = await sql<{ n: string }>(s.db.url, 'select count(*) as n from payments where idempotency_key = $1', [
      key,
    ]);
    expect(row?.n).toBe('1');
  });
});
