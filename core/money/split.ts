/**
 * How a paid call's price is shared: the provider earns the gross price and pays the platform fee out of it, so on
 * the provider's books a call is `provider_earning` (+price) and `platform_fee` (-fee), and on the consumer's books it
 * is `usage` (-price). Summed over everyone, usage and earnings cancel, and the platform's revenue is the sum of the
 * fees. The fee is PLATFORM_FEE_PERCENT of the price rounded half up to a whole cent (1 cent at 20% carries no fee,
 * 3 cents carries 1), so it is never more than the price and never fractional. The gateway books calls per batch
 * (docs/decisions.md, Books per batch): a batch's fee is the sum of its calls' fees, each computed here alone.
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

/**
 * The provider's rows for one earning: the gross earned, and the platform fee paid out of it, keyed `earning:{key}` /
 * `fee:{key}`. The gateway's earnings are per (provider, usage batch): `key` is the accrual's id and `reference`
 * `usage_batch:{batch}`, gross and fee the sums of the provider's calls in the batch, each call split alone
 * (`splitPrice`), so a batch earns to the cent what its calls would have one by one. A call booked alone (before
 * batches, or `callEntries`) is keyed by its usage id and referenced `usage:{id}`.
 */
export function providerEntries(input: {
  key: string;
  reference: string;
  providerOrgId: string;
  grossCents: number;
  feeCents: number;
}): CallEntry[] {
  const entries: CallEntry[] = [
    {
      orgId: input.providerOrgId,
      kind: 'provider_earning',
      amountCents: input.grossCents,
      idempotencyKey: `earning:${input.key}`,
      reference: input.reference,
    },
  ];
  if (input.feeCents > 0) {
    entries.push({
      orgId: input.providerOrgId,
      kind: 'platform_fee',
      amountCents: -input.feeCents,
      idempotencyKey: `fee:${input.key}`,
      reference: input.reference,
    });
  }
  return entries;
}

/**
 * The ledger rows of one paid call booked alone, keyed by its usage event id so a retry books it once. Nothing is
 * booked for a free call; the fee row is left out when the fee rounds to zero (ledger rows are never zero). This is
 * the books' per-call form (calls booked before usage batches, and tests that book calls by hand); the gateway books
 * per batch (core/spend/usage-committer.ts: one `usage` row per org and batch, one earning per provider and batch).
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
      key: input.usageId,
      reference: `usage:${input.usageId}`,
      providerOrgId: input.providerOrgId,
      grossCents: split.priceCents,
      feeCents: split.platformFeeCents,
    }),
  ];
}
