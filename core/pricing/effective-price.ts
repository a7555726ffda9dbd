/**
 * The price a call costs now: the current price, or the scheduled one once its time has come (so the price is
 * exact at the effective instant even before priceChangeWorkflow writes it), less an active discount, never below 0.
 * A percent discount is rounded to the nearest cent (half up).
 */
import type { Discount } from '../../db/entities/index.js';

export interface PricedEndpoint {
  priceCents: number;
  pendingPriceCents?: number | null;
  pendingPriceEffectiveAt?: Date | null;
  discount?: Discount | null;
}

export interface EffectivePrice {
  /** Before discount. */
  price_cents: number;
  price_cents_effective: number;
  discount: (Discount & { off_cents: number }) | null;
  price_increase: { price_cents: number; effective_at: string } | null;
}

export function discountActive(discount: Discount | null | undefined, now: Date): discount is Discount {
  if (!discount) return false;
  if (discount.starts_at && Date.parse(discount.starts_at) > now.getTime()) return false;
  if (discount.ends_at && Date.parse(discount.ends_at) <= now.getTime()) return false;
  return true;
}

export function effectivePrice(endpoint: PricedEndpoint, now: Date): EffectivePrice {
  const pendingDue =
    endpoint.pendingPriceCents != null &&
    endpoint.pendingPriceEffectiveAt != null &&
    endpoint.pendingPriceEffectiveAt.getTime() <= now.getTime();
  const base = pendingDue ? endpoint.pendingPriceCents! : endpoint.priceCents;
  const increase =
    !pendingDue && endpoint.pendingPriceCents != null && endpoint.pendingPriceEffectiveAt != null
      ? { price_cents: endpoint.pendingPriceCents, effective_at: endpoint.pendingPriceEffectiveAt.toISOString() }
      : null;
  let off = 0;
  let discount: EffectivePrice['discount'] = null;
  if (discountActive(endpoint.discount, now)) {
    const d = endpoint.discount;
    off = d.percent !== undefined ? Math.round((base * d.percent) / 100) : Math.min(base, d.amount_cents ?? 0);
    off = Math.min(off, base);
    discount = { ...d, off_cents: off };
  }
  return { price_cents: base, price_cents_effective: Math.max(0, base - off), discount, price_increase: increase };
}
