/**
 * POST /v1/webhooks/stripe. The raw body is verified with STRIPE_WEBHOOK_SECRET (Stripe's 300 s tolerance for old
 * timestamps, and our own refusal of timestamps more than 300 s in the future), then only the fields we read are
 * validated. Each event takes effect once: its id is inserted into stripe_events in the same transaction as its
 * effects, so a duplicate (even a concurrent one) finds the row and does nothing. Handlers converge whatever the order:
 * a payment credits the ledger under `payment:{paymentId}`, whichever event arrives first.
 * Unknown event types are acknowledged and ignored.
 *
 * Nothing outside Postgres hears of an event before its transaction commits: the gateways are told the org changed
 * (core/spend/gateway-events.ts), and Temporal is signalled (a charge settled, a Connect account updated) from the committed
 * state, after the commit. A signal that cannot be sent answers 503, so Stripe delivers the event again; a repeated
 * delivery changes nothing in the books but sends the signals again (workflows take them idempotently).
 */
import type { EarningsService } from './earnings.service.js';
import { LockMode, type EntityManager, type MikroORM } from '@mikro-orm/postgresql';
import Stripe from 'stripe';
import { z } from 'zod';
import { Org, Payment, type IPayment } from '../../db/entities/index.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { ServiceUnavailableError, ValidationError } from '../errors.js';
import type { GatewayEvents } from '../spend/gateway-events.js';
import { newId } from '../ids.js';
import type { LedgerService } from './ledger.service.js';
import type { Logger } from '../logger.js';
import type { TemporalService } from '../temporal/temporal.service.js';
import { liftPaymentSuspension } from './charges.service.js';
import type { ConnectService } from './connect.service.js';
import type { WebhookResult } from './billing.schemas.js';

export const WEBHOOK_TOLERANCE_SECONDS = 300;

const Metadata = z
  .record(z.string(), z.string())
  .nullish()
  .transform((m) => m ?? {});
const CreditCents = z.coerce.number().int().min(1).max(100_000_000);

const CheckoutSession = z.object({
  id: z.string(),
  mode: z.string(),
  payment_status: z.string(),
  amount_total: z.number().int().nullish(),
  customer: z.string().nullish(),
  payment_intent: z.string().nullish(),
  metadata: Metadata,
});
const SetupIntent = z.object({
  id: z.string(),
  customer: z.string().nullish(),
  payment_method: z.string().nullish(),
  metadata: Metadata,
});
const PaymentIntent = z.object({
  id: z.string(),
  amount: z.number().int(),
  metadata: Metadata,
  last_payment_error: z.object({ message: z.string().nullish(), code: z.string().nullish() }).nullish(),
});
const Dispute = z.object({
  id: z.string(),
  amount: z.number().int(),
  payment_intent: z.string().nullish(),
  reason: z.string().nullish(),
});
const Account = z.object({
  id: z.string(),
  charges_enabled: z.boolean(),
  payouts_enabled: z.boolean(),
  details_submitted: z.boolean(),
});

const CREDIT_MEMOS = {
  checkout: 'Credits purchased',
  auto_reload: 'Auto-reload',
  usage_charge: 'Card charge for usage',
} as const;

export class WebhooksService {
  constructor(
    private readonly deps: {
      orm: MikroORM;
      config: Config;
      clock: Clock;
      ledger: LedgerService;
      connect: ConnectService;
      temporal: TemporalService;
      events: GatewayEvents;
      logger: Logger;
      earnings: EarningsService;
    },
  ) {}

  /** Verify and parse; throws 400 for anything not signed by Stripe within the time window. */
  verify(rawBody: string | Buffer, signature: string | undefined): Stripe.Event {
    const secret = this.deps.config.stripe.webhookSecret;
    if (!secret) throw new ServiceUnavailableError('Stripe webhooks are not configured (STRIPE_WEBHOOK_SECRET).');
    if (!signature) throw new ValidationError('Missing Stripe-Signature header.');
    const t = Number(/(?:^|,)t=(\d+)/.exec(signature)?.[1]);
    if (Number.isFinite(t) && t > Math.floor(this.deps.clock.now().getTime() / 1000) + WEBHOOK_TOLERANCE_SECONDS) {
      throw new ValidationError('Stripe-Signature timestamp is in the future.');
    }
    try {
      return Stripe.webhooks.constructEvent(rawBody, signature, secret, WEBHOOK_TOLERANCE_SECONDS);
    } catch (err) {
      throw new ValidationError(`Webhook signature verification failed: ${(err as Error).message}`);
    }
  }

  async handle(rawBody: string | Buffer, signature: string | undefined): Promise<WebhookResult> {
    const event = this.verify(rawBody, signature);
    const { result, orgId } = await this.deps.orm.em.fork().transactional(async (tem) => {
      const inserted = await tem.execute<{ id: string }[]>(
        `insert into stripe_events (id, type, stripe_created_at, outcome) values (?, ?, ?, 'processing')
         on conflict (id) do nothing returning id`,
        [event.id, event.type, new Date(event.created * 1000)],
      );
      if (inserted.length === 0) {
        return { result: { received: true, duplicate: true, event_id: event.id, outcome: 'duplicate' } as const };
      }
      const { outcome, orgId } = await this.dispatch(tem, event);
      await tem.execute(
        'update stripe_events set outcome = ?, org_id = ? where id = ?',
        [outcome, orgId ?? null, event.id],
        'run',
      );
      this.deps.logger.info({ event_id: event.id, type: event.type, outcome }, 'stripe event');
      return { result: { received: true, duplicate: false, event_id: event.id, outcome } as const, orgId };
    });
    // Committed (or found committed by an earlier delivery): now the gateways and the workflows may hear of it.
    if (orgId) await this.deps.events.orgChanged(orgId);
    await this.signalWorkflows(event);
    return result;
  }

  /**
   * Tell the workflows waiting on this event what the committed books say: a charge settled (its payment row's final
   * status), a Connect account updated. Idempotent, so a repeated delivery may send it again.
   */
  private async signalWorkflows(event: Stripe.Event): Promise<void> {
    const object: unknown = event.data.object;
    try {
      switch (event.type) {
        case 'payment_intent.succeeded':
        case 'payment_intent.payment_failed': {
          const intent = parse(PaymentIntent, object);
          const payment = await this.paymentFor(this.deps.orm.em.fork(), intent);
          const wanted = event.type === 'payment_intent.succeeded' ? 'succeeded' : 'failed';
          if (!payment || payment.status !== wanted) return;
          await this.deps.temporal.signalPaymentSettled(
            payment,
            wanted === 'succeeded'
              ? { succeeded: true }
              : { succeeded: false, reason: payment.failureReason ?? 'payment failed' },
          );
          return;
        }
        case 'account.updated': {
          const { id, charges_enabled, payouts_enabled, details_submitted } = parse(Account, object);
          await this.deps.connect.accountUpdated(id, { charges_enabled, payouts_enabled, details_submitted });
          return;
        }
        default:
          return;
      }
    } catch (err) {
      if (err instanceof ValidationError) throw err;
      this.deps.logger.warn({ err, event_id: event.id, type: event.type }, 'stripe event recorded; signal not sent');
      throw new ServiceUnavailableError('The event was recorded but its workflow could not be signalled; retry.');
    }
  }

  private async dispatch(tem: EntityManager, event: Stripe.Event): Promise<{ outcome: string; orgId?: string }> {
    const object: unknown = event.data.object;
    switch (event.type) {
      case 'checkout.session.completed':
        return this.checkoutCompleted(tem, parse(CheckoutSession, object));
      case 'setup_intent.succeeded':
        return this.setupSucceeded(tem, parse(SetupIntent, object));
      case 'payment_intent.succeeded':
        return this.paymentSucceeded(tem, parse(PaymentIntent, object));
      case 'payment_intent.payment_failed':
        return this.paymentFailed(tem, parse(PaymentIntent, object));
      case 'charge.dispute.created':
        return this.disputeCreated(tem, parse(Dispute, object));
      case 'account.updated': {
        const account = parse(Account, object);
        const org = await tem.findOne(Org, { stripeAccountId: account.id });
        // The onboarding workflow is signalled after the commit (signalWorkflows).
        return org
          ? { outcome: 'forwarded to connect onboarding', orgId: org.id }
          : { outcome: 'unknown account; ignored' };
      }
      default:
        return { outcome: 'ignored' };
    }
  }

  private async checkoutCompleted(tem: EntityManager, session: z.infer<typeof CheckoutSession>) {
    if (session.mode !== 'payment') return { outcome: `ignored ${session.mode} session` };
    if (session.payment_status !== 'paid' && session.payment_status !== 'no_payment_required') {
      return { outcome: `not paid (${session.payment_status})` };
    }
    let payment = await tem.findOne(Payment, { stripeRef: session.id });
    if (!payment) {
      // Not created through our checkout route (or that response was lost): trust only signed metadata.
      const orgId = session.metadata.org_id;
      const credit = CreditCents.safeParse(session.metadata.credit_cents);
      if (!orgId || !credit.success || !(await tem.findOne(Org, orgId)))
        return { outcome: 'unknown org or credit; ignored' };
      payment = tem.create(Payment, {
        id: newId('payment'),
        org: tem.getReference(Org, orgId),
        kind: 'checkout',
        stripeRef: session.id,
        amountCents: session.amount_total ?? credit.data,
        creditCents: credit.data,
        idempotencyKey: `checkout:${session.id}`,
      });
    }
    payment.paymentIntentId ??= session.payment_intent ?? null;
    await tem.flush();
    await this.credit(tem, payment, 'purchase', session.id);
    return { outcome: `credited ${payment.creditCents}`, orgId: payment.org.id };
  }

  private async setupSucceeded(tem: EntityManager, intent: z.infer<typeof SetupIntent>) {
    if (!intent.payment_method) return { outcome: 'no payment method; ignored' };
    const org =
      (intent.customer ? await tem.findOne(Org, { stripeCustomerId: intent.customer }) : null) ??
      (intent.metadata.org_id ? await tem.findOne(Org, { id: intent.metadata.org_id }) : null);
    if (!org) return { outcome: 'unknown customer; ignored' };
    org.hasPaymentMethod = true;
    org.defaultPaymentMethodId = intent.payment_method;
    org.billingMode = 'card';
    await tem.flush();
    return { outcome: 'payment method saved', orgId: org.id };
  }

  private async paymentFor(tem: EntityManager, intent: z.infer<typeof PaymentIntent>): Promise<IPayment | null> {
    return (
      (await tem.findOne(Payment, { stripeRef: intent.id })) ??
      (intent.metadata.payment_id ? await tem.findOne(Payment, { id: intent.metadata.payment_id }) : null)
    );
  }

  private async paymentSucceeded(tem: EntityManager, intent: z.infer<typeof PaymentIntent>) {
    const payment = await this.paymentFor(tem, intent);
    if (!payment) return { outcome: 'not ours; ignored' };
    payment.stripeRef ??= intent.id;
    await this.credit(tem, payment, payment.kind === 'auto_reload' ? 'auto_reload' : 'purchase', intent.id);
    return { outcome: `payment ${payment.id} succeeded`, orgId: payment.org.id };
  }

  private async paymentFailed(tem: EntityManager, intent: z.infer<typeof PaymentIntent>) {
    const payment = await this.paymentFor(tem, intent);
    if (!payment) return { outcome: 'not ours; ignored' };
    if (payment.status === 'succeeded') return { outcome: 'already succeeded; ignored', orgId: payment.org.id };
    payment.stripeRef ??= intent.id;
    payment.status = 'failed';
    payment.failureReason = intent.last_payment_error?.message ?? intent.last_payment_error?.code ?? 'payment failed';
    await tem.flush();
    return { outcome: `payment ${payment.id} failed`, orgId: payment.org.id };
  }

  /**
   * A customer disputed a card payment with their bank: the credits it bought are taken back (as far as a prepaid
   * balance allows; a card-billed org's balance may go negative and is owed) and the org is suspended until an
   * operator reviews it (`npm run admin -- unsuspend`); a later successful payment does not lift it.
   */
  private async disputeCreated(tem: EntityManager, dispute: z.infer<typeof Dispute>) {
    const intentId = dispute.payment_intent;
    const payment = intentId
      ? await tem.findOne(Payment, { $or: [{ stripeRef: intentId }, { paymentIntentId: intentId }] })
      : null;
    if (!payment) return { outcome: 'not ours; ignored' };
    const org = await tem.findOneOrFail(Org, payment.org.id, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const reclaim = org.billingMode === 'card' ? payment.creditCents : Math.min(payment.creditCents, org.creditCents);
    if (reclaim > 0) {
      await this.deps.ledger.post(
        {
          orgId: org.id,
          kind: 'chargeback',
          amountCents: -reclaim,
          idempotencyKey: `dispute:${dispute.id}`,
          reference: `stripe:${dispute.id}`,
          memo: `Chargeback of payment ${payment.id} (${dispute.reason ?? 'disputed'})`,
        },
        tem,
      );
    }
    // The providers' share of what the disputed money paid for goes back too (core/billing/earnings.service.ts).
    await this.deps.earnings.reverseDisputed(tem, {
      disputeId: dispute.id,
      payment: {
        id: payment.id,
        orgId: org.id,
        kind: payment.kind,
        creditCents: payment.creditCents,
        createdAt: payment.createdAt,
      },
      reclaimedCents: Math.max(reclaim, 0),
    });
    await tem.execute(
      "update orgs set suspended = true, suspended_reason = 'chargeback' where id = ?",
      [org.id],
      'run',
    );
    return { outcome: `chargeback on payment ${payment.id}: reclaimed ${reclaim}, suspended`, orgId: org.id };
  }

  /** Credit a payment once (ledger key `payment:{id}`), mark it succeeded, and lift a payment-failure suspension. */
  private async credit(tem: EntityManager, payment: IPayment, kind: 'purchase' | 'auto_reload', stripeRef: string) {
    await this.deps.ledger.post(
      {
        orgId: payment.org.id,
        kind,
        amountCents: payment.creditCents,
        idempotencyKey: `payment:${payment.id}`,
        reference: `stripe:${stripeRef}`,
        memo: CREDIT_MEMOS[payment.kind],
      },
      tem,
    );
    payment.status = 'succeeded';
    await tem.flush();
    await liftPaymentSuspension(tem, payment.org.id);
  }
}

function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success)
    throw new ValidationError(`Unexpected Stripe event payload: ${r.error.issues[0]?.message ?? 'invalid'}`);
  return r.data;
}
