import { describe, expect, it } from 'vitest';
import { effectivePrice } from '../../core/pricing/effective-price.js';

const now = new Date('2026-06-01T12:00:00Z');
const at = (iso: string) => new Date(iso);

describe('effectivePrice', () => {
  it('is the price when nothing else applies', () => {
    expect(effectivePrice({ priceCents: 7 }, now)).toEqual({
      price_cents: 7,
      price_cents_effective: 7,
      discount: null,
      price_increase: null,
    });
  });

  it('shows a future increase without applying it, and applies it once due', () => {
    const e = { priceCents: 10, pendingPriceCents: 15, pendingPriceEffectiveAt: at('2026-06-01T12:00:01Z') };
    expect(effectivePrice(e, now)).toMatchObject({
      price_cents: 10,
      price_increase: { price_cents: 15, effective_at: '2026-06-01T12:00:01.000Z' },
    });
    expect(effectivePrice(e, at('2026-06-01T12:00:01Z'))).toMatchObject({
      price_cents: 15,
      price_cents_effective: 15,
      price_increase: null,
    });
  });

  it('applies percent discounts rounded half up, and amount discounts capped at the price', () => {
    expect(effectivePrice({ priceCents: 5, discount: { percent: 10 } }, now)).toMatchObject({
      price_cents_effective: 4,
      discount: { off_cents: 1 },
    });
    expect(effectivePrice({ priceCents: 4, discount: { percent: 10 } }, now)).toMatchObject({
      price_cents_effective: 4,
      discount: { off_cents: 0 },
    });
    expect(effectivePrice({ priceCents: 3, discount: { amount_cents: 5 } }, now)).toMatchObject({
      price_cents_effective: 0,
      discount: { off_cents: 3 },
    });
    expect(effectivePrice({ priceCents: 9, discount: { percent: 100 } }, now).price_cents_effective).toBe(0);
  });

  it('honours the discount window [starts_at, ends_at)', () => {
    const d = { percent: 50, starts_at: '2026-06-01T12:00:00Z', ends_at: '2026-06-02T00:00:00Z' };
    expect(effectivePrice({ priceCents: 10, discount: d }, at('2026-06-01T11:59:59Z')).discount).toBeNull();
    expect(effectivePrice({ priceCents: 10, discount: d }, now).price_cents_effective).toBe(5);
    expect(effectivePrice({ priceCents: 10, discount: d }, at('2026-06-02T00:00:00Z')).discount).toBeNull();
  });

  it('discounts the increased price once it is due', () => {
    const e = {
      priceCents: 10,
      pendingPriceCents: 20,
      pendingPriceEffectiveAt: at('2026-06-01T00:00:00Z'),
      discount: { amount_cents: 5 },
    };
    expect(effectivePrice(e, now)).toMatchObject({ price_cents: 20, price_cents_effective: 15 });
  });
});
