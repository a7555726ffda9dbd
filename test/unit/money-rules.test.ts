// The money rules, property-style over random values (plain loops; a seeded generator so a failure reproduces).
import { describe, expect, it } from 'vitest';
import { seededRandom as random } from '../helpers/random.js';
import { addKeySpend, chargeCall, crossesReloadThreshold } from '../../core/money/money-rules.js';

describe('chargeCall', () => {
  it('credit applied plus billable is the price; credit is never more than the positive balance', () => {
    const next = random(7);
    for (let i = 0; i < 5_000; i++) {
      const price = next(10_000);
      const balance = next(20_000) - 5_000;
      const mode = next(2) === 0 ? 'prepaid' : 'card';
      const c = chargeCall(price, balance, mode);
      expect(c.creditAppliedCents + c.billableCents).toBe(price);
      expect(c.creditAppliedCents).toBeGreaterThanOrEqual(0);
      expect(c.creditAppliedCents).toBeLessThanOrEqual(Math.max(0, balance));
      expect(c.creditAppliedCents).toBeLessThanOrEqual(c.chargedCents);
      if (mode === 'card') expect(c.chargedCents).toBe(price);
      else {
        // A prepaid balance never goes negative, and what is charged is paid from credit.
        expect(Math.max(0, balance) - c.chargedCents).toBeGreaterThanOrEqual(0);
        expect(c.chargedCents).toBe(c.creditAppliedCents);
      }
      if (balance >= price) expect(c).toEqual({ chargedCents: price, creditAppliedCents: price, billableCents: 0 });
    }
  });

  it('examples: a prepaid org short of credit is charged what is left; a card org owes the rest', () => {
    expect(chargeCall(10, 4, 'prepaid')).toEqual({ chargedCents: 4, creditAppliedCents: 4, billableCents: 6 });
    expect(chargeCall(10, 4, 'card')).toEqual({ chargedCents: 10, creditAppliedCents: 4, billableCents: 6 });
    expect(chargeCall(10, -50, 'card')).toEqual({ chargedCents: 10, creditAppliedCents: 0, billableCents: 10 });
    expect(chargeCall(10, 0, 'prepaid')).toEqual({ chargedCents: 0, creditAppliedCents: 0, billableCents: 10 });
  });
});

describe('crossesReloadThreshold', () => {
  it('is true exactly when a balance goes from at or above the threshold to under it, with reload on', () => {
    const next = random(11);
    for (let i = 0; i < 5_000; i++) {
      const threshold = next(3) === 0 ? null : next(1_000);
      const before = next(2_000) - 500;
      const after = before + next(400) - 200;
      const enabled = next(4) !== 0;
      const crossed = crossesReloadThreshold(enabled, threshold, before, after);
      expect(crossed).toBe(enabled && threshold !== null && before >= threshold && after < threshold);
      if (after >= before) expect(crossed).toBe(false);
    }
    expect(crossesReloadThreshold(true, 100, 100, 99)).toBe(true);
    expect(crossesReloadThreshold(true, 100, 99, 50)).toBe(false);
    expect(crossesReloadThreshold(false, 100, 200, 50)).toBe(false);
  });
});

describe('addKeySpend', () => {
  it("adds a call's spend to its key and every ancestor, summed over calls", () => {
    const totals = new Map<string, number>();
    addKeySpend(totals, 'k_child', ['k_parent', 'k_root'], 5);
    addKeySpend(totals, 'k_parent', ['k_root'], 3);
    addKeySpend(totals, 'k_other', undefined, 2);
    expect(Object.fromEntries(totals)).toEqual({ k_child: 5, k_parent: 8, k_root: 8, k_other: 2 });
  });
});
