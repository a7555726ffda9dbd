/**
 * Off-session charges of the saved card (auto-reload). Every attempt is a Payment row keyed by the workflow's
 * idempotency key, and the same key goes to Stripe, so a retried activity never charges twice: a retry finds the row
 * (and returns its state) or repeats the Stripe call with the same key, which Stripe answers with the same intent.
 * A charge that is not final at once settles later through the payment_intent.* webhooks.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type Stripe from 'stripe';
import { Org, Payment, User } from '../../db/entities/index.js';
import type { LedgerService } from '../ledger/ledger.service.js';
import type { Logger } from '../logger.js';
import type { Mailer } from '../mail/mailer.js';
import { reloadFailedEmail } from '../mail/templates.js';
import type { ChargeAttempt } from '../temporal/contracts.js';
import { newId } from '../ids.js';
import { requireStripe } from './stripe.js';

export class ChargesService {
  constructor(
    private readonly deps: {
      orm: MikroORM;
      stripe: Stripe | undefined;
      ledger: LedgerService;
      mailer: Mailer;
      logger: Logger;
    },
  ) {}

  async chargeForReload(input: { orgId: string; idempotencyKey: string }): Promise<ChargeAttempt> {
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
      if (!org.autoReloadEnabled) return { status: 'skipped', reason: 'auto-reload is off' };
      if (org.suspended) return { status: 'skipped', reason: 'organization is suspended' };
      if (org.autoReloadThresholdCents == null || org.creditCents >= org.autoReloadThresholdCents) {
        return { status: 'skipped', reason: 'balance is above the threshold' };
      }
      if (!org.hasPaymentMethod || !org.stripeCustomerId || !org.defaultPaymentMethodId) {
        return { status: 'failed', paymentId: null, reason: 'no saved payment method' };
      }
      payment = em.create(Payment, {
        id: newId('payment'),
        org,
        kind: 'auto_reload',
        amountCents: org.autoReloadAmountCents!,
        creditCents: org.autoReloadAmountCents!,
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
          metadata: { payment_id: payment.id, org_id: org.id, kind: 'auto_reload' },
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
    payment.stripeRef = intent.id;
    if (intent.status === 'succeeded') {
      await em.transactional(async (tem) => {
        await this.deps.ledger.post(
          {
            orgId: org.id,
            kind: 'auto_reload',
            amountCents: payment.creditCents,
            idempotencyKey: `payment:${payment.id}`,
            reference: `stripe:${intent.id}`,
            memo: 'Auto-reload',
          },
          tem,
        );
        await tem.nativeUpdate(Payment, { id: payment.id }, { status: 'succeeded', stripeRef: intent.id });
      });
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

  /** A reload failed: suspend the org (cleared by the next successful payment) and tell its owner. */
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
    }
    const owner = await em.findOne(User, { org: org.id, role: 'owner' });
    if (newly && owner) {
      this.deps.mailer.sendInBackground(reloadFailedEmail(owner.email, org.autoReloadAmountCents ?? 0, input.reason));
    }
  }
}
