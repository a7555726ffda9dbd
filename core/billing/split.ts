/**
 * How a paid call's price is shared: the provider earns the gross price and pays the platform fee out of it, so on
 * the provider's books a call is `provider_earning` (+price) and `platform_fee` (-fee), and on the consumer's books it
 * is `usage` (-price). Summed over everyone, usage and earnings cancel, and the platform's revenue is the sum of the
 * fees. The fee is PLATFORM_FEE_PERCENT of the price rounded half up to a whole cent (1 cent at 20% carries no fee,
 * 3 cents carries 1), so it is never more than the price and never fractional.
 */
import type { LedgerKind } from '../../db/entities/index.js';

export interface PriceSplit {
  priceCents: number;
  platformFeeCents: number;
  providerNetCents: number;
}

export function splitPrice(priceCents: number, feePercent: number): PriceSplit {
  if (!Number.isSafeInteger(priceCents) || priceCents < 0) throw new RangeError('price must be whole cents, >= 0');
  if (!Number.isInteger(feePercent) || feePercent < 0 || feePercent > 100) throw new RangeError('fee percent 0..100');
  const platformFeeCents = Math.floor((priceCents * feePercent + 50) / 100);
  return { priceCents, platformFeeCents, providerNetCents: priceCents - platformFeeCents };
}

/** One ledger row of a call's settlement. */
export interface CallEntry {
  orgId: string;
  kind: Extract<LedgerKind, 'usage' | 'provider_earning' | 'platform_fee'>;
  amountCents: number;
  idempotencyKey: string;
  reference: string;
}

/** The provider's rows for one call's earning: the gross price earned, and the platform fee paid out of it. */
export function providerEntries(input: {
  usageId: string;
  providerOrgId: string;
  grossCents: number;
  feeCents: number;
}): CallEntry[] {
  const reference = `usage:${input.usageId}`;
  const entries: CallEntry[] = [
    {
      orgId: input.providerOrgId,
      kind: 'provider_earning',
      amountCents: input.grossCents,
      idempotencyKey: `earning:${input.usageId}`,
      reference,
    },
  ];
  if (input.feeCents > 0) {
    entries.push({
      orgId: input.providerOrgId,
      kind: 'platform_fee',
      amountCents: -input.feeCents,
      idempotencyKey: `fee:${input.usageId}`,
      reference,
    });
  }
  return entries;
}

/**
 * The ledger rows of one paid call, keyed by its usage event id so a retried commit books it once. Nothing is
 * booked for a free call; the fee row is left out when the fee rounds to zero (ledger rows are never zero). The
 * gateway books the consumer's row with the call and queues the provider's (core/billing/earnings.service.ts).
 */
export function callEntries(input: {
  usageId: string;
  consumerOrgId: string;
  providerOrgId: string;
  priceCents: number;
  feePercent: number;
}): CallEntry[] {
  const split = splitPrice(input.priceCents, input.feePercent);
  if (split.priceCents === 0) return [];
  return [
    {
      orgId: input.consumerOrgId,
      kind: 'usage',
      amountCents: -split.priceCents,
      idempotencyKey: `usage:${input.usageId}`,
      reference: `usage:${input.usageId}`,
    },
    ...providerEntries({
      usageId: input.usageId,
      providerOrgId: input.providerOrgId,
      grossCents: split.priceCents,
      feeCents: split.platformFeeCents,
    }),
  ];
}
