/**
 * Embedded payments: the "Stripe" of `npm start` with no Stripe account. stripe-mock (core/billing/stripe-mock.ts)
 * answers every API call, but it has no hosted pages and sends no events, so a checkout it creates could never be
 * paid. In that mode only, the hosted-page URLs our routes return point at our own test pages (api/pages/
 * embedded-payments.page.ts); the person's "Pay" there builds the event Stripe would send
 * (`checkout.session.completed`, `setup_intent.succeeded`), signs it with the embedded webhook secret by Stripe's own
 * signing helper, and hands it to the same webhook handler a live Stripe delivery reaches: verification, de-duplication
 * by event id, ledger and gateway invalidation are the production code. Nothing here runs when STRIPE_SECRET_KEY is set.
 */
import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { Org, Payment } from '../../db/entities/index.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import { randomString, safeEqual } from '../crypto.js';
import { NotFoundError, ValidationError } from '../errors.js';
import type { WebhooksService } from './webhooks.service.js';

export const EMBEDDED_PAYMENTS_PATH = '/embedded-payments';
/** A test card number people recognise; only shown, never sent anywhere. */
export const EMBEDDED_TEST_CARD = '4242 4242 4242 4242';

export interface EmbeddedCheckout {
  paymentId: string;
  orgId: string;
  amountCents: number;
  creditCents: number;
  status: 'open' | 'paid';
}

export class EmbeddedPayments {
  /** Signs webhook events and the setup pages' links; made per process start, like stripe-mock itself. */
  readonly webhookSecret = `whsec_${randomString(32)}`;

  constructor(private readonly deps: { orm: MikroORM; publicBase: string; webhooks: () => WebhooksService }) {}

  /**
   * The test checkout page for a payment, carrying where to go after paying or cancelling (what Stripe keeps with the
   * session). Signed, so the page is no open redirect: only the URLs our checkout route was given come back.
   */
  checkoutUrl(paymentId: string, successUrl: string, cancelUrl: string): string {
    const query = new URLSearchParams({ success: successUrl, cancel: cancelUrl });
    query.set('sig', this.sign(`checkout:${paymentId}:${successUrl}:${cancelUrl}`));
    return `${this.deps.publicBase}${EMBEDDED_PAYMENTS_PATH}/checkout/${encodeURIComponent(paymentId)}?${query.toString()}`;
  }

  /** The success and cancel URLs of a checkout page link, when its signature holds. */
  checkoutReturns(paymentId: string, query: URLSearchParams): { success: string; cancel: string } {
    const success = query.get('success') ?? '';
    const cancel = query.get('cancel') ?? '';
    const sig = query.get('sig') ?? '';
    if (!sig || !safeEqual(sig, this.sign(`checkout:${paymentId}:${success}:${cancel}`))) {
      throw new NotFoundError('This checkout link is not valid.');
    }
    return { success, cancel };
  }

  setupUrl(orgId: string): string {
    const sig = this.sign(`setup:${orgId}`);
    return `${this.deps.publicBase}${EMBEDDED_PAYMENTS_PATH}/setup/${encodeURIComponent(orgId)}?sig=${sig}`;
  }

  async checkout(paymentId: string): Promise<EmbeddedCheckout> {
    const payment = await this.payment(paymentId);
    return {
      paymentId: payment.id,
      orgId: payment.org.id,
      amountCents: payment.amountCents,
      creditCents: payment.creditCents,
      status: payment.status === 'succeeded' ? 'paid' : 'open',
    };
  }

  /** The person paid on the test page: Stripe would now send `checkout.session.completed`. Idempotent per payment. */
  async completeCheckout(paymentId: string): Promise<EmbeddedCheckout> {
    const payment = await this.payment(paymentId);
    await this.deliver(`evt_embedded_checkout_${payment.id}`, 'checkout.session.completed', {
      id: payment.stripeRef,
      object: 'checkout.session',
      mode: 'payment',
      status: 'complete',
      payment_status: 'paid',
      amount_total: payment.amountCents,
      customer: null,
      payment_intent: `pi_embedded_${payment.id}`,
      metadata: { org_id: payment.org.id, credit_cents: String(payment.creditCents), payment_id: payment.id },
    });
    return this.checkout(paymentId);
  }

  /** The setup page's link names an org and is signed, so only the link our route handed out adds a card there. */
  async setupOrg(orgId: string, sig: string | undefined): Promise<{ orgId: string; hasCard: boolean }> {
    if (!sig || !safeEqual(sig, this.sign(`setup:${orgId}`)))
      throw new NotFoundError('This card setup link is not valid.');
    const org = await this.deps.orm.em.fork().findOne(Org, orgId, { fields: ['id', 'hasPaymentMethod'] });
    if (!org) throw new NotFoundError('This card setup link is not valid.');
    return { orgId: org.id, hasCard: org.hasPaymentMethod };
  }

  async completeSetup(orgId: string, sig: string | undefined): Promise<void> {
    await this.setupOrg(orgId, sig);
    const stamp = randomString(12);
    await this.deliver(`evt_embedded_setup_${stamp}`, 'setup_intent.succeeded', {
      id: `seti_embedded_${stamp}`,
      object: 'setup_intent',
      status: 'succeeded',
      customer: null,
      // stripe-mock knows this test payment method; off-session charges against it succeed there.
      payment_method: 'pm_card_visa',
      metadata: { org_id: orgId },
    });
  }

  private async payment(paymentId: string) {
    const payment = await this.deps.orm.em.fork().findOne(Payment, { id: paymentId, kind: 'checkout' });
    if (!payment) throw new NotFoundError('No such checkout.');
    if (payment.status === 'failed') throw new ValidationError('This checkout has failed; start a new one.');
    return payment;
  }

  private async deliver(id: string, type: string, object: Record<string, unknown>): Promise<void> {
    const payload = JSON.stringify({
      id,
      object: 'event',
      type,
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      data: { object },
    });
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: this.webhookSecret });
    await this.deps.webhooks().handle(payload, header);
  }

  private sign(value: string): string {
    return createHmac('sha256', this.webhookSecret).update(value).digest('base64url');
  }
}
