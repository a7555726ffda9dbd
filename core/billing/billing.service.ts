/**
 * Billing for consumers: balance and packs, hosted Checkout to buy credits, card setup and the customer portal
 * (steps a person completes in a browser), and auto-reload settings. Stripe stays behind this service.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type Stripe from 'stripe';
import { Org, Payment, type IOrg } from '../../db/entities/index.js';
import type { Principal } from '../auth/scopes.js';
import type { Config } from '../config.js';
import { ConflictError, InternalError, NotFoundError } from '../errors.js';
import { newId } from '../ids.js';
import { PACKS, type AutoReloadBody, type CheckoutBody } from './billing.schemas.js';
import type { EmbeddedPayments } from './embedded-payments.js';
import { requireStripe } from './stripe.js';
import type {
  AccountView,
  AutoReloadView,
  BalanceView,
  CheckoutView,
  PackView,
  PortalView,
  SetupIntentView,
} from './billing.schemas.js';
export type { AccountView, BalanceView } from './billing.schemas.js';

/**
 * A card-on-file org's balance may go below zero: that is usage beyond its credits, owed and charged to the card
 * (see usage billing). The view shows it as `billable_cents`, and `credit_cents` never below zero.
 */
export function balanceView(org: IOrg): BalanceView {
  return {
    credit_cents: Math.max(0, org.creditCents),
    billing_mode: org.billingMode,
    auto_reload_enabled: org.autoReloadEnabled,
    has_payment_method: org.hasPaymentMethod,
    suspended: org.suspended,
    billable_cents: Math.max(0, 0 - Number(org.creditCents)),
  };
}

export class BillingService {
  constructor(
    private readonly deps: {
      orm: MikroORM;
      config: Config;
      stripe: Stripe | undefined;
      /** Set only when payments run on the embedded stripe-mock (`npm start` with no Stripe key): its test pages. */
      embedded?: EmbeddedPayments;
    },
  ) {}

  async balance(principal: Principal): Promise<BalanceView> {
    const org = await this.deps.orm.em.fork().findOne(Org, principal.orgId);
    if (!org) throw new NotFoundError('Organization not found.');
    return balanceView(org);
  }

  /** The balance view with what the console also shows: auto-reload settings and why the org is suspended. */
  async account(principal: Principal): Promise<AccountView> {
    const org = await this.deps.orm.em.fork().findOne(Org, principal.orgId);
    if (!org) throw new NotFoundError('Organization not found.');
    return {
      ...balanceView(org),
      auto_reload_threshold_cents: org.autoReloadThresholdCents ?? null,
      auto_reload_amount_cents: org.autoReloadAmountCents ?? null,
      suspended_reason: org.suspendedReason ?? null,
    };
  }

  packs(): PackView[] {
    return PACKS.map((p) => ({ ...p, currency: 'usd' }));
  }

  /** The org's Stripe customer, created once (idempotency key per org). */
  async ensureCustomer(orgId: string): Promise<string> {
    const stripe = requireStripe(this.deps.stripe);
    const em = this.deps.orm.em.fork();
    const org = await em.findOneOrFail(Org, orgId);
    if (org.stripeCustomerId) return org.stripeCustomerId;
    const customer = await stripe.customers.create(
      { name: org.name ?? undefined, metadata: { org_id: org.id } },
      { idempotencyKey: `customer:${org.id}` },
    );
    org.stripeCustomerId = customer.id;
    await em.flush();
    return customer.id;
  }

  async checkout(principal: Principal, body: CheckoutBody): Promise<CheckoutView> {
    const stripe = requireStripe(this.deps.stripe);
    const pack = body.pack ? PACKS.find((p) => p.name === body.pack)! : undefined;
    const amount = pack ? pack.price_cents : body.amount_cents!;
    const credit = pack ? pack.credit_cents : body.amount_cents!;
    const customer = await this.ensureCustomer(principal.orgId);
    const base = this.deps.config.urls.publicBase;
    const paymentId = newId('payment');
    const successUrl = body.success_url ?? `${base}/billing/return?status=success&session_id={CHECKOUT_SESSION_ID}`;
    const cancelUrl = body.cancel_url ?? `${base}/billing/return?status=cancel`;
    const metadata = {
      org_id: principal.orgId,
      credit_cents: String(credit),
      payment_id: paymentId,
      pack: pack?.name ?? 'custom',
    };
    const session = await stripe.checkout.sessions.create(
      {
        mode: 'payment',
        customer,
        client_reference_id: principal.orgId,
        line_items: [
          {
            quantity: 1,
            price_data: {
              currency: 'usd',
              unit_amount: amount,
              product_data: { name: pack ? `Marketplace credits: ${pack.name}` : 'Marketplace credits' },
            },
          },
        ],
        success_url: successUrl,
        cancel_url: cancelUrl,
        metadata,
        payment_intent_data: { metadata },
      },
      { idempotencyKey: `checkout:${paymentId}` },
    );
    const em = this.deps.orm.em.fork();
    em.create(Payment, {
      id: paymentId,
      org: em.getReference(Org, principal.orgId),
      kind: 'checkout',
      stripeRef: session.id,
      amountCents: amount,
      creditCents: credit,
      idempotencyKey: `checkout:${paymentId}`,
    });
    await em.flush();
    return {
      checkout_url: this.deps.embedded
        ? this.deps.embedded.checkoutUrl(paymentId, successUrl.replace('{CHECKOUT_SESSION_ID}', session.id), cancelUrl)
        : session.url,
      checkout_session_id: session.id,
      amount_cents: amount,
      credit_cents: credit,
      expires_at: session.expires_at ? new Date(session.expires_at * 1000).toISOString() : null,
    };
  }

  /**
   * Whether the org's checkout session `sessionId` has been paid (its completion booked, by the webhook or the return
   * page): what a tool waiting on the person who opened the checkout page reads.
   */
  async checkoutPaid(orgId: string, sessionId: string): Promise<boolean> {
    const em = this.deps.orm.em.fork();
    const payment = await em.findOne(Payment, { stripeRef: sessionId, org: orgId, kind: 'checkout' });
    return payment?.status === 'succeeded';
  }

  /** The org's saved card (the payment method `setup_intent.succeeded` recorded), or null: what card setup waits on. */
  async savedCardOf(orgId: string): Promise<string | null> {
    const org = await this.deps.orm.em.fork().findOne(Org, { id: orgId }, { fields: ['defaultPaymentMethodId'] });
    return org?.defaultPaymentMethodId ?? null;
  }

  /**
   * Card setup: a hosted page (Checkout in setup mode) where the person confirms the card, and the SetupIntent that
   * page created for it (the only one: `setup_intent.succeeded` for it saves the card). The intent comes expanded with
   * the session, so this is one Stripe call.
   */
  async setupIntent(principal: Principal): Promise<SetupIntentView> {
    const stripe = requireStripe(this.deps.stripe);
    const customer = await this.ensureCustomer(principal.orgId);
    const base = this.deps.config.urls.publicBase;
    const metadata = { org_id: principal.orgId };
    const page = await stripe.checkout.sessions.create({
      mode: 'setup',
      customer,
      currency: 'usd',
      success_url: `${base}/billing/return?status=card_added`,
      cancel_url: `${base}/billing/return?status=cancel`,
      setup_intent_data: { metadata },
      metadata,
      expand: ['setup_intent'],
    });
    const intent =
      typeof page.setup_intent === 'string' ? await stripe.setupIntents.retrieve(page.setup_intent) : page.setup_intent;
    if (!intent) throw new InternalError('Stripe returned a setup session without its SetupIntent.');
    return {
      setup_intent_id: intent.id,
      client_secret: intent.client_secret,
      url: this.deps.embedded ? this.deps.embedded.setupUrl(principal.orgId) : page.url,
      checkout_session_id: page.id,
      expires_at: page.expires_at ? new Date(page.expires_at * 1000).toISOString() : null,
    };
  }

  async portal(principal: Principal): Promise<PortalView> {
    const stripe = requireStripe(this.deps.stripe);
    const customer = await this.ensureCustomer(principal.orgId);
    const session = await stripe.billingPortal.sessions.create({
      customer,
      return_url: `${this.deps.config.urls.publicBase}/billing/return?status=portal`,
    });
    return { url: session.url };
  }

  async configureAutoReload(principal: Principal, body: AutoReloadBody): Promise<AutoReloadView> {
    const em = this.deps.orm.em.fork();
    const org = await em.findOneOrFail(Org, principal.orgId);
    if (body.enabled && !org.hasPaymentMethod) {
      throw new ConflictError('Add a payment method (POST /v1/billing/setup-intent) before enabling auto-reload.');
    }
    org.autoReloadEnabled = body.enabled;
    if (body.threshold_cents !== undefined) org.autoReloadThresholdCents = body.threshold_cents;
    if (body.amount_cents !== undefined) org.autoReloadAmountCents = body.amount_cents;
    await em.flush();
    return {
      auto_reload_enabled: org.autoReloadEnabled,
      threshold_cents: org.autoReloadThresholdCents ?? null,
      amount_cents: org.autoReloadAmountCents ?? null,
    };
  }
}
