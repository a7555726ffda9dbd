// A listing's page after its provider changes prices and adds terms (issue 31): a discount shows with its label and
// what it takes off (and the JSON-LD offer carries the discounted price, what a call costs now); a price increase on
// the live API shows as a scheduled change with its date; the required terms in force are listed with their version
// and the page says the gateway refuses calls until they are accepted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, describe as show } from '../../helpers/http.js';
import { startTemporal } from '../../helpers/temporal.js';
import { startStorefront, type StorefrontFixture } from './storefront-fixture.js';

describe("a listing's prices and terms on its page", () => {
  let f: StorefrontFixture;
  let temporal: Awaited<ReturnType<typeof startTemporal>>;

  beforeAll(async () => {
    temporal = await startTemporal(); // a price increase on a live API starts its workflow
    f = await startStorefront({}, temporal.address);
  }, 120_000);
  afterAll(async () => {
    await f?.close();
    await temporal?.env.teardown();
  });

  const asProvider = async (method: string, path: string, body: unknown) => {
    const res = await http(f.api.url, method, path, { token: f.provider.session, body });
    expect(res.status, `${method} ${path}: ${show(res)}`).toBeLessThan(300);
    return res.body.data as Record<string, any>;
  };

  it('shows the discount, the scheduled increase and the required terms', async () => {
    const apiId = f.ids['fjord-forecasts']!;
    const detail = (await http(f.api.url, 'GET', '/v1/apis/fjord-forecasts')).body.data as {
      endpoints: { endpoint_id: string; path: string }[];
    };
    const id = (path: string) => detail.endpoints.find((e) => e.path === path)!.endpoint_id;
    await asProvider('PATCH', `/v1/provider/apis/${apiId}/pricing`, {
      endpoints: [
        { endpoint_id: id('/forecast/{city}'), price_cents: 7 },
        { endpoint_id: id('/alerts'), discount: { percent: 25, label: 'Launch week' } },
      ],
    });
    const doc = await asProvider('POST', '/v1/provider/documents', {
      kind: 'terms',
      version: '2.1',
      title: 'Fjord terms of use',
      body: 'Use the forecasts kindly.',
      api_id: apiId,
      acceptance_mode: 'required',
    });
    await asProvider('POST', `/v1/provider/documents/${doc.document_id}/activate`, {});

    const page = await http(f.api.url, 'GET', '/apis/fjord-forecasts');
    expect(page.status, show(page)).toBe(200);
    const t = page.text;
    // /alerts: $0.12 less 25% (3 cents) = $0.09 now, the base price struck through, the discount named.
    expect(t).toMatch(/\$0\.09 <s>\$0\.12<\/s><br><span class="ok">Launch week: −\$0\.03<\/span>/);
    // /forecast/{city}: still $0.05 now, $0.07 from the date the notice ends.
    expect(t).toMatch(/<td class="num">\$0\.05<\/td><td>\$0\.07 from \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC<\/td>/);
    expect(t).toContain('Fjord terms of use</a> <span class="muted">(terms, version 2.1, required, in force since');
    expect(t).toContain('required before calling: the gateway answers 428 until your organization accepts');
    expect(t).toContain(`/v1/documents/${doc.document_id}/snapshot"`);
    const ld = JSON.parse(/<script type="application\/ld\+json">([^<]*)<\/script>/.exec(t)![1]!) as {
      offers: { name: string; price: string; priceValidUntil?: string }[];
    };
    expect(ld.offers.find((o) => o.name === 'POST /alerts')?.price).toBe('0.09');
    const forecast = ld.offers.find((o) => o.name === 'GET /forecast/{city}')!;
    expect(forecast.price).toBe('0.05');
    expect(forecast.priceValidUntil).toMatch(/^\d{4}-\d{2}-\d{2}$/);

    // The listing's "Read and accept the terms": the API by name, and the way back to its page.
    const terms = await http(f.api.url, 'GET', '/terms/fjord-forecasts', { headers: { accept: 'text/html' } });
    expect(terms.status, show(terms)).toBe(200);
    expect(terms.text).toContain('<h1>Terms of Fjord Forecasts</h1>');
    expect(terms.text).toContain('<p><a href="/apis/fjord-forecasts">← Fjord Forecasts</a></p>');
    expect(terms.text).toContain('Use the forecasts kindly.');
  });
});
