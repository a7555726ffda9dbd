/**
 * A provider payout: one transfer to the provider's Stripe Connect account per org and period. The row and its
 * negative `payout` ledger entry are written together before Stripe is called, so the amount is fixed once and a
 * retried transfer (same idempotency key) can never move a different sum.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { orgOwnedRow } from './org-owned.js';
import { cents, idemKey, stripeId, timestamps } from './common.js';

export const PAYOUT_STATUSES = ['pending', 'paid', 'failed'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

export const Payout = defineEntity({
  name: 'Payout',
  tableName: 'payouts',
  properties: {
    ...orgOwnedRow(),
    /** The billing period paid out, `YYYY-MM` (UTC). */
    period: p.string().length(7),
    amountCents: cents(),
    destination: p.string().length(64),
    status: p.enum([...PAYOUT_STATUSES]).default('pending'),
    stripeTransferId: stripeId().nullable(),
    /** `payout:{orgId}:{period}`, sent to Stripe and used as the ledger key. */
    idempotencyKey: idemKey().unique(),
    failureReason: p.string().length(500).nullable(),
    ...timestamps(),
  },
  uniques: [{ properties: ['org', 'period'] }],
  checks: [{ name: 'payouts_amount_positive', expression: 'amount_cents > 0' }],
});

export type IPayout = InferEntity<typeof Payout>;
