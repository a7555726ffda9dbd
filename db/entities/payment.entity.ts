/**
 * Money that moves through Stripe: a checkout (credits bought), an auto-reload charge, or a charge of accrued
 * card-on-file usage. `stripeRef` (checkout session or payment intent id) is unique, so a completion is applied once.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { orgOwnedRow } from './org-owned.js';
import { cents, idemKey, stripeId, timestamps } from './common.js';

export const PAYMENT_KINDS = ['checkout', 'auto_reload', 'usage_charge'] as const;
export type PaymentKind = (typeof PAYMENT_KINDS)[number];
export const PAYMENT_STATUSES = ['pending', 'succeeded', 'failed', 'expired'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const Payment = defineEntity({
  name: 'Payment',
  tableName: 'payments',
  properties: {
    ...orgOwnedRow(),
    kind: p.enum([...PAYMENT_KINDS]),
    stripeRef: stripeId().nullable().unique(),
    /** The payment intent behind a checkout session (disputes name the intent, not the session). */
    paymentIntentId: stripeId().nullable().index(),
    /** What the card is charged, in cents. */
    amountCents: cents(),
    /** Credits the payment grants (checkout, auto-reload) or usage it settles (usage charge), in cents. */
    creditCents: cents(),
    status: p.enum([...PAYMENT_STATUSES]).default('pending'),
    /** Our idempotency key for Stripe (`${workflowId}:${step}` for workflow charges). */
    idempotencyKey: idemKey().unique(),
    failureReason: p.string().length(500).nullable(),
    ...timestamps(),
  },
  checks: [{ name: 'payments_amounts_positive', expression: 'amount_cents > 0 AND credit_cents > 0' }],
});

export type IPayment = InferEntity<typeof Payment>;
