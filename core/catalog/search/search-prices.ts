/**
 * Search's price filters (issue 31): `min_price_cents` / `max_price_cents` over a listing's cheapest PAID endpoint,
 * and `pricing=free|paid`. The price a range is compared with is the cheapest endpoint with a price above zero; a
 * listing whose endpoints are all free counts as 0 (free fits any `max_price_cents`, and only `min_price_cents=0`);
 * a listing without endpoints (a directory entry) has no price and is left out by any price filter. Base prices
 * (`endpoints.price_cents`), as the `price` sort and the items' price range use. docs/decisions.md, "Price filters".
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SearchQuery } from './search.schemas.js';

export interface ListingPrices {
  /** Cheapest endpoint, free ones included (the `price` sort). */
  min: number;
  max: number;
  /** Cheapest paid endpoint; null when every endpoint is free. */
  minPaid: number | null;
}

/**
 * Every listing with endpoints: its cheapest, dearest and cheapest paid endpoint. Not joined with `apis`: search
 * keeps only the live listings of its copy, and the join cost a scan of the whole catalog per query at 100,000.
 */
export async function listingPrices(em: EntityManager): Promise<Map<string, ListingPrices>> {
  const rows = await em.execute<{ api_id: string; min: string; max: string; min_paid: string | null }[]>(
    `select e.api_id, min(e.price_cents) as min, max(e.price_cents) as max,
            min(e.price_cents) filter (where e.price_cents > 0) as min_paid
       from endpoints e group by e.api_id`,
  );
  return new Map(
    rows.map((r) => [
      r.api_id,
      { min: Number(r.min), max: Number(r.max), minPaid: r.min_paid === null ? null : Number(r.min_paid) },
    ]),
  );
}

/** Does the query filter by price at all? */
export const pricedBy = (q: Pick<SearchQuery, 'min_price_cents' | 'max_price_cents' | 'pricing'>): boolean =>
  q.min_price_cents !== undefined || q.max_price_cents !== undefined || q.pricing !== undefined;

/** The listing ids the query's price filters keep (all of them when it has none). */
export function priceFilter(
  q: Pick<SearchQuery, 'min_price_cents' | 'max_price_cents' | 'pricing'>,
  prices: ReadonlyMap<string, ListingPrices>,
): (id: string) => boolean {
  if (!pricedBy(q)) return () => true;
  return (id) => {
    const p = prices.get(id);
    if (!p) return false; // no endpoints: no price
    if (q.pricing === 'free' && p.max !== 0) return false;
    if (q.pricing === 'paid' && p.max === 0) return false;
    const price = p.minPaid ?? 0;
    if (q.min_price_cents !== undefined && price < q.min_price_cents) return false;
    if (q.max_price_cents !== undefined && price > q.max_price_cents) return false;
    return true;
  };
}
