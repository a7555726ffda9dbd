// GET /v1/search's price filters (issue 31): `min_price_cents` / `max_price_cents` over a listing's cheapest PAID
// endpoint (a listing whose endpoints are all free counts as 0; one without endpoints, a directory entry, has no
// price and is left out by any price filter) and `pricing=free|paid`; bad values are a 400 naming the field, min above
// max included; the OpenAPI document describes the three parameters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../api/openapi/document.js';
import { expectFailure, http, describe as show } from '../../helpers/http.js';
import { startStorefront, type StorefrontFixture } from './storefront-fixture.js';

describe('GET /v1/search price filters', () => {
  let f: StorefrontFixture;

  beforeAll(async () => {
    f = await startStorefront();
  }, 120_000);
  afterAll(async () => {
    await f?.close();
  });

  /** The slugs a search answers, sorted. */
  const slugs = async (query: string) => {
    const res = await http(f.api.url, 'GET', `/v1/search?${query}`);
    expect(res.status, `${query}: ${show(res)}`).toBe(200);
    expect(res.body.meta.total).toBe(res.body.data.length);
    return (res.body.data as { slug: string }[]).map((i) => i.slug).sort();
  };

  it('min and max compare the cheapest paid endpoint (free endpoints do not count; all free is 0)', async () => {
    // fjord-forecasts: 0, 5, 12 → 5; pricey-fjord-pixels: 20, 50 → 20; free-fjord-facts: 0 → 0; nameless-narwhal: no
    // endpoints → no price; the directory entry: no endpoints → no price.
    expect(await slugs('min_price_cents=0')).toEqual(['fjord-forecasts', 'free-fjord-facts', 'pricey-fjord-pixels']);
    expect(await slugs('min_price_cents=5')).toEqual(['fjord-forecasts', 'pricey-fjord-pixels']);
    expect(await slugs('min_price_cents=6')).toEqual(['pricey-fjord-pixels']);
    expect(await slugs('max_price_cents=4')).toEqual(['free-fjord-facts']);
    expect(await slugs('max_price_cents=5')).toEqual(['fjord-forecasts', 'free-fjord-facts']);
    expect(await slugs('min_price_cents=5&max_price_cents=20')).toEqual(['fjord-forecasts', 'pricey-fjord-pixels']);
    expect(await slugs('min_price_cents=20&max_price_cents=20')).toEqual(['pricey-fjord-pixels']);
    expect(await slugs('min_price_cents=21&max_price_cents=49')).toEqual([]);
    // With words and other filters alike.
    expect(await slugs('q=fjord&max_price_cents=10&category=weather')).toEqual(['fjord-forecasts']);
  });

  it('pricing=free is every endpoint free; pricing=paid has a paid endpoint; both combine with the range', async () => {
    expect(await slugs('pricing=free')).toEqual(['free-fjord-facts']);
    expect(await slugs('pricing=paid')).toEqual(['fjord-forecasts', 'pricey-fjord-pixels']);
    expect(await slugs('pricing=paid&max_price_cents=10')).toEqual(['fjord-forecasts']);
    expect(await slugs('pricing=free&min_price_cents=1')).toEqual([]);
  });

  it('the price sort is unchanged: cheapest endpoint first, listings without endpoints last', async () => {
    const res = await http(f.api.url, 'GET', '/v1/search?sort=price&callable=true');
    const order = (res.body.data as { slug: string }[]).map((i) => i.slug);
    expect(order.slice(0, 2).sort()).toEqual(['fjord-forecasts', 'free-fjord-facts']); // both have a free endpoint
    expect(order.slice(2)).toEqual(['pricey-fjord-pixels', 'nameless-narwhal']);
  });

  it('refuses bad values with a 400 naming the field, min above max included', async () => {
    const cases: [string, string][] = [
      ['min_price_cents=10&max_price_cents=5', 'min_price_cents: must not be more than max_price_cents'],
      ['min_price_cents=-1', 'min_price_cents'],
      ['max_price_cents=1.5', 'max_price_cents'],
      ['max_price_cents=abc', 'max_price_cents'],
      ['pricing=cheap', 'pricing: must be one of free, paid'],
    ];
    for (const [query, message] of cases) {
      const res = await http(f.api.url, 'GET', `/v1/search?${query}`);
      expectFailure(res, 400, 'validation_failed');
      expect(res.body.error.message, query).toContain(message);
    }
  });

  it('the OpenAPI document describes min_price_cents, max_price_cents and pricing', () => {
    const paths = openApiDocument().json.paths as Record<string, { get: { parameters: unknown } }>;
    const params = paths['/v1/search']!.get.parameters as {
      name: string;
      description?: string;
      schema: Record<string, unknown>;
    }[];
    const byName = new Map(params.map((p) => [p.name, p]));
    expect(byName.get('min_price_cents')?.description).toContain('cheapest paid endpoint');
    expect(byName.get('max_price_cents')?.description).toContain('cheapest paid endpoint');
    expect(byName.get('pricing')?.schema.enum).toEqual(['free', 'paid']);
  });
});
