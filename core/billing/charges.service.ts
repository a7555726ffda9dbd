/**
 * Off-session charges of the saved card (auto-reload, and card-on-file usage). Every attempt is a Payment row keyed by the workflow's
 * idempotency key, and the same key goes to Stripe, so a retried activity never charges twice: a retry finds the row
 * (and returns its state) or repeats the Stripe call with the same key, which Stripe answers with the same intent.
 * A charge that is not final at once settles later through the payment_intent.* webhooks.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type Stripe from 'stripe';
import { Org, Payment, User, type IOrg, type IPayment } from '../../db/entities/index.js';
import type { GatewayEvents } from '../spend/gateway-events.js';
import type { LedgerService } from './ledger.service.js';
import type { Logger } from '../logger.js';
import type { Mailer } from '../mail/mailer.js';
import { reloadFailedEmail, usageChargeFailedEmail } from './emails.js';
import type { ChargeAttempt } from '../temporal/contracts.js';
import { newId } from '../ids.js';
import { requireStripe } from './stripe.js';

/** Stripe refuses card charges under 50 cents (USD). */
export const STRIPE_MINIMUM_CHARGE_CENTS = 50;

const PAYMENT_MEMOS = { auto_reload: 'Auto-reload', usage_charge: 'Card charge for usage' } as const;

/** Any successful payment lifts a suspension for a failed payment (never an operator's or a chargeback's). */
export async function liftPaymentSuspension(em: EntityManager, orgId: string): Promise<void> {
  await em.execute(
    "update orgs set suspended = false, suspended_reason = null where id = ? and suspended and suspended_reason = 'payment_failed'",
    [orgId],
    'run',
  );
}

export class ChargesService {
  constructor(
    private readonly deps: {
      orm: MikroORM;
      stripe: Stripe | undefined;
      ledger: LedgerService;
      mailer: Mailer;
      events: GatewayEvents;
      logger: Logger;
    },
  ) {}

  /** Auto-reload: buy the org's configured reload amount of credits with the saved card. */
  async chargeForReload(input: { orgId: string; idempotencyKey: string }): Promise<ChargeAttempt> {
    return this.charge(input, 'auto_reload', (org) => {
      if (!org.autoReloadEnabled) return { skip: 'auto-reload is off' };
      if (org.autoReloadThresholdCents == null || org.creditCents >= org.autoReloadThresholdCents) {
        return { skip: 'balance is above the threshold' };
      }
      return { amountCents: org.autoReloadAmountCents! };
    });
  }

  /**
   * Card-on-file billing: charge what the org owes (its negative balance) to the saved card, which books it back to
   * zero. Amounts under Stripe's card minimum wait for the next charge; a month-end charge of less is carried over.
   */
  async chargeUsage(input: { orgId: string; idempotencyKey: string }): Promise<ChargeAttempt> {
    return this.charge(input, 'usage_charge', (org) => {
      if (org.billingMode !== 'card') return { skip: 'not billed by card' };
      const owed = -Number(org.creditCents);
      if (owed <= 0) return { skip: 'nothing owed' };
      if (owed < STRIPE_MINIMUM_CHARGE_CENTS) return { skip: `owed ${owed} cents is under the card minimum` };
      return { amountCents: owed };
    });
  }

  /**
   * One off-session charge of the saved card. The Payment row is created once per idempotency key (its amount fixed
   * then), and Stripe gets the same key, so a retry repeats neither the decision nor the charge.
   */
  private async charge(
    input: { orgId: string; idempotencyKey: string },
    kind: 'auto_reload' | 'usage_charge',
    decide: (org: IOrg) => { skip: string } | { amountCents: number },
  ): Promise<ChargeAttempt> {
    const em = this.deps.orm.em.fork();
    let payment = await em.findOne(Payment, { idempotencyKey: input.idempotencyKey });
    if (payment?.stripeRef) {
      // A retry after the charge was made: report what we know.
      if (payment.status === 'succeeded') return { status: 'succeeded', paymentId: payment.id };
      if (payment.status === 'failed')
        return { status: 'failed', paymentId: payment.id, reason: payment.failureReason ?? 'payment failed' };
      return { status: 'pending', paymentId: payment.id };
    }
    const org = await em.findOneOrFail(Org, input.orgId);
    if (!payment) {
      // A usage charge is how an org suspended for a failed payment settles its debt; nothing else charges one.
      const retriesDebt = kind === 'usage_charge' && org.suspendedReason === 'payment_failed';
      if (org.suspended && !retriesDebt) return { status: 'skipped', reason: 'organization is suspended' };
      const decision = decide(org);
      if ('skip' in decision) return { status: 'skipped', reason: decision.skip };
      if (!org.hasPaymentMethod || !org.stripeCustomerId || !org.defaultPaymentMethodId) {
        return { status: 'failed', paymentId: null, reason: 'no saved payment method' };
      }
      payment = em.create(Payment, {
        id: newId('payment'),
        org,
        kind,
        amountCents: decision.amountCents,
        creditCents: decision.amountCents,
        idempotencyKey: input.idempotencyKey,
      });
      await em.flush();
    }
    const stripe = requireStripe(this.deps.stripe);
    let intent: Stripe.PaymentIntent;
    try {
      intent = await stripe.paymentIntents.create(
        {
          amount: payment.amountCents,
          currency: 'usd',
          customer: org.stripeCustomerId!,
          payment_method: org.defaultPaymentMethodId!,
          off_session: true,
          confirm: true,
          metadata: { payment_id: payment.id, org_id: org.id, kind },
        },
        { idempotencyKey: input.idempotencyKey },
      );
    } catch (err) {
      if (err instanceof Error && (err as { type?: string }).type === 'StripeCardError') {
        payment.status = 'failed';
        payment.failureReason = err.message;
        await em.flush();
        return { status: 'failed', paymentId: payment.id, reason: err.message };
      }
      throw err; // transient: the activity retries with the same key
    }
    return this.settle(em, org, payment, intent, kind);
  }

  /** Records the PaymentIntent's outcome; a succeeded one credits the org's ledger and lifts a payment suspension. */
  private async settle(
    em: EntityManager,
    org: IOrg,
    payment: IPayment,
    intent: Stripe.PaymentIntent,
    kind: 'auto_reload' | 'usage_charge',
  ): Promise<ChargeAttempt> {
    payment.stripeRef = intent.id;
    if (intent.status === 'succeeded') {
      await em.transactional(async (tem) => {
        await this.deps.ledger.post(
          {
            orgId: org.id,
            kind: kind === 'auto_reload' ? 'auto_reload' : 'purchase',
            amountCents: payment.creditCents,
            idempotencyKey: `payment:${payment.id}`,
            reference: `stripe:${intent.id}`,
            memo: PAYMENT_MEMOS[kind],
          },
          tem,
        );
        await tem.nativeUpdate(Payment, { id: payment.id }, { status: 'succeeded', stripeRef: intent.id });
        await liftPaymentSuspension(tem, org.id);
      });
      // Committed: the gateways see the new balance (and a lifted suspension) on the next call.
      await this.deps.events.orgChanged(org.id);
      return { status: 'succeeded', paymentId: payment.id };
    }
    if (intent.status === 'canceled') {
      payment.status = 'failed';
      payment.failureReason = 'canceled';
      await em.flush();
      return { status: 'failed', paymentId: payment.id, reason: 'canceled' };
    }
    await em.flush();
    return { status: 'pending', paymentId: payment.id };
  }

  /** A charge failed: suspend the org (cleared by the next successful payment) and tell its owner. */
  async suspendForFailedPayment(input: { orgId: string; paymentId: string | null; reason: string }): Promise<void> {
    const em = this.deps.orm.em.fork();
    const org = await em.findOneOrFail(Org, input.orgId);
    if (input.paymentId) {
      await em.nativeUpdate(
        Payment,
        { id: input.paymentId, status: { $ne: 'succeeded' } },
        { status: 'failed', failureReason: input.reason },
      );
    }
    const newly = !org.suspended;
    if (newly) {
      org.suspended = true;
      org.suspendedReason = 'payment_failed';
      await em.flush();
      await this.deps.events.orgChanged(org.id);
    }
    const owner = await em.findOne(User, { org: org.id, role: 'owner' });
    if (newly && owner) {
      const payment = input.paymentId ? await em.findOne(Payment, input.paymentId) : null;
      this.deps.mailer.sendInBackground(
        payment?.kind === 'usage_charge'
          ? usageChargeFailedEmail(owner.email, payment.amountCents, input.reason)
          : reloadFailedEmail(owner.email, payment?.amountCents ?? org.autoReloadAmountCents ?? 0, input.reason),
      );
    }
  }
}
