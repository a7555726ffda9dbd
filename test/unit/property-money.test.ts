// The money rules as properties (fast-check; docs/testing-properties.md): the fee split and its rounding over random
// prices and fee percents, the ledger rows of a call, what a call takes from credit (`chargeCall`), the auto-reload
// crossing and key spend, each checked against the rule as core/money/split.ts and core/money/money-rules.ts state
// it. Runs from a fixed seed; PROPERTY_RUNS and PROPERTY_SEED override (test/helpers/property-runs.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { callEntries, splitPrice } from '../../core/money/split.js';
import { addKeySpend, chargeCall, crossesReloadThreshold } from '../../core/money/money-rules.js';
import { propertyParameters } from '../helpers/property-runs.js';

/** The largest price the API accepts (core/money/cents.ts, `Cents`). */
const MAX_CENTS = 1_000_000_000_000;

const RUNS = 2_000;
const price = fc.oneof(fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 0, max: MAX_CENTS }));
const percent = fc.integer({ min: 0, max: 100 });
const mode = fc.constantFrom<'prepaid' | 'card'>('prepaid', 'card');
const balance = fc.oneof(fc.integer({ min: -10_000, max: 10_000 }), fc.integer({ min: -MAX_CENTS, max: MAX_CENTS }));

/** The fee exactly: price × percent / 100 rounded half up, in integers (BigInt, no float on the way). */
function exactFee(priceCents: number, feePercent: number): number {
  return Number((BigInt(priceCents) * BigInt(feePercent) * 2n + 100n) / 200n);
}

describe('property: the fee split (core/money/split.ts)', () => {
  it('fee + net is the price; the fee is price × percent rounded half up; neither is negative', () => {
    fc.assert(
      fc.property(price, percent, (p, pct) => {
        const s = splitPrice(p, pct);
        expect(s.priceCents).toBe(p);
        expect(s.platformFeeCents + s.providerNetCents).toBe(p);
        expect(s.platformFeeCents).toBe(exactFee(p, pct));
        expect(s.platformFeeCents).toBeGreaterThanOrEqual(0);
        expect(s.providerNetCents).toBeGreaterThanOrEqual(0);
        expect(Number.isInteger(s.platformFeeCents)).toBe(true);
        // Half up: 100 × fee is within (−50, +50] of price × percent.
        const diff = 100 * s.platformFeeCents - p * pct;
        expect(diff > -50 && diff <= 50).toBe(true);
      }),
      propertyParameters(RUNS),
    );
  });

  it('the fee and the net are monotone in the price; the fee is monotone in the percent', () => {
    fc.assert(
      fc.property(price, price, percent, percent, (a, b, pa, pb) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const [plo, phi] = pa <= pb ? [pa, pb] : [pb, pa];
        expect(splitPrice(lo, pa).platformFeeCents).toBeLessThanOrEqual(splitPrice(hi, pa).platformFeeCents);
        expect(splitPrice(lo, pa).providerNetCents).toBeLessThanOrEqual(splitPrice(hi, pa).providerNetCents);
        expect(splitPrice(lo, plo).platformFeeCents).toBeLessThanOrEqual(splitPrice(lo, phi).platformFeeCents);
        // One more cent of price moves the fee by at most one cent.
        if (lo < MAX_CENTS) {
          const step = splitPrice(lo + 1, pa).platformFeeCents - splitPrice(lo, pa).platformFeeCents;
          expect(step === 0 || step === 1).toBe(true);
        }
      }),
      propertyParameters(RUNS),
    );
  });

  it('0% takes nothing, 100% takes everything; bad inputs are refused, never rounded', () => {
    fc.assert(
      fc.property(price, (p) => {
        expect(splitPrice(p, 0)).toEqual({ priceCents: p, platformFeeCents: 0, providerNetCents: p });
        expect(splitPrice(p, 100)).toEqual({ priceCents: p, platformFeeCents: p, providerNetCents: 0 });
      }),
      propertyParameters(RUNS),
    );
    const badPrice = fc.oneof(
      fc.integer({ max: -1 }),
      fc.double({ noNaN: false }).filter((x) => !Number.isSafeInteger(x)),
    );
    const badPercent = fc.oneof(
      fc.integer({ max: -1 }),
      fc.integer({ min: 101 }),
      fc.double().filter((x) => !Number.isInteger(x)),
    );
    fc.assert(
      fc.property(badPrice, percent, (p, pct) => {
        expect(() => splitPrice(p, pct)).toThrow(RangeError);
      }),
      propertyParameters(RUNS),
    );
    fc.assert(
      fc.property(price, badPercent, (p, pct) => {
        expect(() => splitPrice(p, pct)).toThrow(RangeError);
      }),
      propertyParameters(RUNS),
    );
  });

  it("a call's ledger rows sum to minus the fee, are never zero, and each has its own idempotency key", () => {
    fc.assert(
      fc.property(price, percent, (p, pct) => {
        const entries = callEntries({
          usageId: 'use_1',
          consumerOrgId: 'org_c',
          providerOrgId: 'org_p',
          priceCents: p,
          feePercent: pct,
        });
        if (p === 0) {
          expect(entries).toEqual([]);
          return;
        }
        const fee = splitPrice(p, pct).platformFeeCents;
        expect(entries.reduce((sum, e) => sum + e.amountCents, 0) + fee).toBe(0);
        for (const e of entries) expect(e.amountCents).not.toBe(0);
        expect(new Set(entries.map((e) => e.idempotencyKey)).size).toBe(entries.length);
        const consumer = entries.filter((e) => e.orgId === 'org_c');
        expect(consumer).toEqual([expect.objectContaining({ kind: 'usage', amountCents: -p })]);
        const provider = entries.filter((e) => e.orgId === 'org_p');
        expect(provider.reduce((sum, e) => sum + e.amountCents, 0)).toBe(p - fee);
        expect(provider.some((e) => e.kind === 'platform_fee')).toBe(fee > 0);
      }),
      propertyParameters(RUNS),
    );
  });
});

describe('property: what a call takes from credit (chargeCall)', () => {
  it('credit applied + billable is the price; credit never exceeds the positive balance; prepaid never below zero', () => {
    fc.assert(
      fc.property(price, balance, mode, (p, bal, m) => {
        const c = chargeCall(p, bal, m);
        const credit = Math.max(0, bal);
        expect(c.creditAppliedCents + c.billableCents).toBe(p);
        expect(c.creditAppliedCents).toBe(Math.min(p, credit));
        expect(c.creditAppliedCents).toBeGreaterThanOrEqual(0);
        expect(c.billableCents).toBeGreaterThanOrEqual(0);
        expect(c.creditAppliedCents).toBeLessThanOrEqual(c.chargedCents);
        expect(c.chargedCents).toBeLessThanOrEqual(p);
        if (m === 'card') {
          expect(c.chargedCents).toBe(p);
        } else {
          // Prepaid: what is charged is paid from credit, and a balance at or above zero stays there.
          expect(c.chargedCents).toBe(c.creditAppliedCents);
          expect(credit - c.chargedCents).toBeGreaterThanOrEqual(0);
        }
        if (bal >= p) expect(c).toEqual({ chargedCents: p, creditAppliedCents: p, billableCents: 0 });
      }),
      propertyParameters(RUNS),
    );
  });

  it('a run of calls against one prepaid balance: the balance never goes negative and nothing is charged twice', () => {
    fc.assert(
      fc.property(fc.nat({ max: 10_000 }), fc.array(fc.nat({ max: 500 }), { maxLength: 60 }), (start, prices) => {
        let bal = start;
        let charged = 0;
        let billable = 0;
        for (const p of prices) {
          const c = chargeCall(p, bal, 'prepaid');
          bal -= c.chargedCents;
          charged += c.chargedCents;
          billable += c.billableCents;
          expect(bal).toBeGreaterThanOrEqual(0);
        }
        expect(charged).toBe(start - bal);
        expect(charged + billable).toBe(prices.reduce((a, b) => a + b, 0));
      }),
      propertyParameters(RUNS),
    );
  });
});

describe('property: auto-reload crossing and key spend', () => {
  it('a debit crosses the threshold exactly when it takes the balance from at or above it to under it', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.option(fc.integer({ min: -1_000, max: 1_000 })),
        fc.integer({ min: -2_000, max: 2_000 }),
        fc.nat({ max: 2_000 }),
        (enabled, threshold, before, debit) => {
          const after = before - debit;
          const crossed = crossesReloadThreshold(enabled, threshold, before, after);
          expect(crossed).toBe(enabled && threshold !== null && before >= threshold && after < threshold);
          // A zero debit never crosses.
          expect(crossesReloadThreshold(enabled, threshold, before, before)).toBe(false);
        },
      ),
      propertyParameters(RUNS),
    );
  });

  it("a call's spend counts once against its key and once against each ancestor", () => {
    const ids = fc.constantFrom('k1', 'k2', 'k3', 'k4');
    const call = fc.record({ key: ids, ancestors: fc.uniqueArray(ids, { maxLength: 3 }), cents: fc.nat({ max: 500 }) });
    fc.assert(
      fc.property(fc.array(call, { maxLength: 40 }), (calls) => {
        const totals = new Map<string, number>();
        const expected = new Map<string, number>();
        for (const c of calls) {
          const ancestors = c.ancestors.filter((a) => a !== c.key);
          addKeySpend(totals, c.key, ancestors, c.cents);
          for (const id of [c.key, ...ancestors]) expected.set(id, (expected.get(id) ?? 0) + c.cents);
        }
        expect(totals).toEqual(expected);
      }),
      propertyParameters(RUNS),
    );
  });
});
