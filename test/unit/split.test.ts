// A paid call's price split: the fee is PLATFORM_FEE_PERCENT rounded half up to whole cents, never more than the
// price; the ledger rows of a call cancel across consumer and provider, keyed by the usage id.
import { describe, expect, it } from 'vitest';
import { callEntries, splitPrice } from '../../core/money/split.js';

describe('splitPrice', () => {
  it.each([
    [0, 20, 0],
    [1, 20, 0],
    [2, 20, 0],
    [3, 20, 1],
    [5, 20, 1],
    [7, 20, 1],
    [8, 20, 2],
    [100, 20, 20],
    [999, 15, 150],
    [5, 0, 0],
    [5, 100, 5],
  ])('price %i at %i%% carries a fee of %i', (price, percent, fee) => {
    expect(splitPrice(price, percent)).toEqual({
      priceCents: price,
      platformFeeCents: fee,
      providerNetCents: price - fee,
    });
  });

  it('never charges a fee above the price or below zero, for every price up to 10,000 and every percent', () => {
    for (let percent = 0; percent <= 100; percent += 7) {
      for (let price = 0; price <= 10_000; price += 13) {
        const { platformFeeCents, providerNetCents } = splitPrice(price, percent);
        expect(Number.isInteger(platformFeeCents)).toBe(true);
        expect(platformFeeCents).toBeGreaterThanOrEqual(0);
        expect(providerNetCents).toBeGreaterThanOrEqual(0);
        expect(Math.abs(platformFeeCents - (price * percent) / 100)).toBeLessThanOrEqual(0.5);
      }
    }
  });

  it('refuses fractional or negative prices and percents out of range', () => {
    expect(() => splitPrice(1.5, 20)).toThrow(RangeError);
    expect(() => splitPrice(-1, 20)).toThrow(RangeError);
    expect(() => splitPrice(5, 101)).toThrow(RangeError);
  });
});

describe('callEntries', () => {
  const base = { usageId: 'use_1', consumerOrgId: 'org_c', providerOrgId: 'org_p', feePercent: 20 };

  it('books usage, earning and fee rows that cancel across the books', () => {
    const rows = callEntries({ ...base, priceCents: 5 });
    expect(rows).toEqual([
      { orgId: 'org_c', kind: 'usage', amountCents: -5, idempotencyKey: 'usage:use_1', reference: 'usage:use_1' },
      {
        orgId: 'org_p',
        kind: 'provider_earning',
        amountCents: 5,
        idempotencyKey: 'earning:use_1',
        reference: 'usage:use_1',
      },
      { orgId: 'org_p', kind: 'platform_fee', amountCents: -1, idempotencyKey: 'fee:use_1', reference: 'usage:use_1' },
    ]);
    expect(rows.filter((r) => r.kind !== 'platform_fee').reduce((sum, r) => sum + r.amountCents, 0)).toBe(0);
  });

  it('books nothing for a free call and leaves out a zero fee', () => {
    expect(callEntries({ ...base, priceCents: 0 })).toEqual([]);
    expect(callEntries({ ...base, priceCents: 1 }).map((r) => r.kind)).toEqual(['usage', 'provider_earning']);
  });
});
