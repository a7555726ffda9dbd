// The storefront for machines (issue 31): the sitemap lists exactly the live listings and the providers with one
// (absolute URLs from PUBLIC_BASE_URL); each listing's JSON-LD is a WebAPI whose offers carry its endpoints' prices,
// allowed by the page's CSP hash of the exact block; provider pages carry an Organization; every page has its
// canonical URL and OpenGraph tags; robots.txt opens the storefront and closes the console; llms.txt tells an agent
// the MCP URL, the search route, quoting, keys and caps.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, describe as show } from '../../helpers/http.js';
import { startStorefront, type StorefrontFixture } from './storefront-fixture.js';

const BASE = 'https://market.example.org';

/** The JSON-LD blocks of a page, each with the CSP hash its text needs. */
function jsonLd(html: string): { value: Record<string, any>; hash: string }[] {
  return [...html.matchAll(/<script type="application\/ld\+json">([^<]*)<\/script>/g)].map((m) => ({
    value: JSON.parse(m[1]!) as Record<string, any>,
    hash: `'sha256-${createHash('sha256').update(m[1]!, 'utf8').digest('base64')}'`,
  }));
}

describe('storefront for machines', () => {
  let f: StorefrontFixture;

  beforeAll(async () => {
    f = await startStorefront({ PUBLIC_BASE_URL: BASE });
  }, 120_000);
  afterAll(async () => {
    await f?.close();
  });

  const get = async (path: string) => {
    const res = await http(f.api.url, 'GET', path);
    expect(res.status, `${path}: ${show(res)}`).toBe(200);
    return res;
  };

  it('the sitemap lists exactly the live listings and the providers with a live listing', async () => {
    const res = await get('/sitemap.xml');
    expect(res.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    expect(
      res.text.startsWith(
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
      ),
    ).toBe(true);
    const locs = [...res.text.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]!).sort();
    // What the catalog says is live: every listing search can browse, and each one's provider.
    const search = await get('/v1/search?limit=500');
    const live = (search.body.data as { slug: string; provider: { slug: string | null } }[]).map((i) => i.slug);
    const providers = [
      ...new Set((search.body.data as { provider: { slug: string | null } }[]).map((i) => i.provider.slug!)),
    ];
    expect(live.sort()).toEqual([
      'fjord-forecasts',
      'free-fjord-facts',
      'nameless-narwhal',
      'open-fjord-tides',
      'pricey-fjord-pixels',
    ]);
    expect(locs).toEqual(
      [...live.map((s) => `${BASE}/apis/${s}`), ...providers.map((p) => `${BASE}/providers/${p}`)].sort(),
    );
    for (const lastmod of res.text.matchAll(/<lastmod>([^<]+)<\/lastmod>/g)) {
      expect(new Date(lastmod[1]!).toISOString()).toBe(lastmod[1]);
    }
  });

  it("each listing's JSON-LD is a WebAPI whose offers carry its endpoints' prices, allowed by the CSP's hash", async () => {
    for (const slug of ['fjord-forecasts', 'free-fjord-facts', 'pricey-fjord-pixels']) {
      const page = await get(`/apis/${slug}`);
      const detail = (await get(`/v1/apis/${slug}`)).body.data as {
        name: string;
        endpoints: { endpoint_id: string; method: string; path: string; price_cents_effective: number }[];
      };
      const blocks = jsonLd(page.text);
      expect(blocks).toHaveLength(1);
      const [{ value, hash }] = blocks as [{ value: Record<string, any>; hash: string }];
      expect(page.headers.get('content-security-policy')).toContain(`script-src ${hash}`);
      expect(value).toMatchObject({
        '@context': 'https://schema.org',
        '@type': 'WebAPI',
        name: detail.name,
        url: `${BASE}/apis/${slug}`,
      });
      expect(value.offers).toEqual(
        detail.endpoints.map((e) =>
          expect.objectContaining({
            '@type': 'Offer',
            name: `${e.method} ${e.path}`,
            price: (e.price_cents_effective / 100).toFixed(2),
            priceCurrency: 'USD',
          }),
        ),
      );
    }
    const fjord = jsonLd((await get('/apis/fjord-forecasts')).text)[0]!.value;
    expect(fjord.offers.map((o: { price: string }) => o.price)).toEqual(['0.05', '0.12', '0.00']);
    expect(fjord.provider).toEqual({
      '@type': 'Organization',
      name: 'Fjord Labs',
      url: `${BASE}/providers/fjord-labs`,
    });
    // A directory entry: no offers (nothing is sold here), its own documentation.
    const tides = jsonLd((await get(`/apis/${f.directorySlug}`)).text)[0]!.value;
    expect(tides.offers).toBeUndefined();
    expect(tides.documentation).toBe('https://tides.example.org/docs');
  });

  it('a provider page carries an Organization with its live APIs', async () => {
    const page = await get('/providers/fjord-labs');
    const [{ value, hash }] = jsonLd(page.text) as [{ value: Record<string, any>; hash: string }];
    expect(page.headers.get('content-security-policy')).toContain(`script-src ${hash}`);
    expect(value).toMatchObject({
      '@type': 'Organization',
      name: 'Fjord Labs',
      url: `${BASE}/providers/fjord-labs`,
      sameAs: ['https://fjord.example'],
    });
    expect(value.makesOffer.map((o: { itemOffered: { url: string } }) => o.itemOffered.url).sort()).toEqual(
      ['fjord-forecasts', 'free-fjord-facts', 'pricey-fjord-pixels'].map((s) => `${BASE}/apis/${s}`),
    );
  });

  it('pages carry their canonical URL and OpenGraph tags', async () => {
    const cases: [string, string, string][] = [
      ['/apis/fjord-forecasts', `${BASE}/apis/fjord-forecasts`, 'Fjord Forecasts'],
      ['/apis?q=fjord', `${BASE}/apis`, 'APIs matching “fjord”'],
      ['/providers/fjord-labs', `${BASE}/providers/fjord-labs`, 'Fjord Labs'],
      ['/categories/weather', `${BASE}/categories/weather`, 'Weather'],
      ['/leaderboards', `${BASE}/leaderboards`, 'Leaderboards'],
      ['/market', `${BASE}/market`, 'Market'],
    ];
    for (const [path, canonical, title] of cases) {
      const { text } = await get(path);
      expect(text, path).toContain(`<link rel="canonical" href="${canonical}">`);
      expect(text, path).toContain(`<meta property="og:url" content="${canonical}">`);
      expect(text, path).toContain(`<meta property="og:title" content="${title}">`);
      expect(text, path).toMatch(/<meta property="og:description" content="[^"]+">/);
      expect(text, path).toMatch(/<meta name="description" content="[^"]+">/);
    }
    expect((await get('/apis/fjord-forecasts')).text).toContain('<meta property="og:type" content="product">');
  });

  it('robots.txt opens the storefront, closes the console, sign-in and the JSON API, and names the sitemap', async () => {
    const { text, headers } = await get('/robots.txt');
    expect(headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(text).toContain('User-agent: *\nAllow: /\n');
    for (const path of ['/console', '/login', '/signup', '/oauth/', '/v1/'])
      expect(text).toContain(`Disallow: ${path}\n`);
    expect(text).not.toMatch(/Disallow: \/apis\n|Disallow: \/providers/);
    expect(text).toContain(`Sitemap: ${BASE}/sitemap.xml`);
  });

  it('llms.txt tells an agent the MCP URL, the search route, quoting, keys and caps, and that x402 is not here yet', async () => {
    const { text } = await get('/llms.txt');
    const { mcp, gateway } = f.stack.config.urls;
    expect(text.startsWith('# API marketplace\n')).toBe(true);
    expect(text).toContain(`${mcp}/mcp`);
    expect(text).toContain(`GET ${BASE}/v1/search?q=`);
    expect(text).toContain('min_price_cents');
    expect(text).toContain(`GET ${BASE}/v1/apis/{slug}/quote?method=GET&path=/forecast`);
    expect(text).toContain(`${gateway}/v1/proxy/{slug}/{path}`);
    for (const word of ['budget_cents', 'per_call_max_cents', 'daily_cap_cents', 'add_api_tools', 'svc_register']) {
      expect(text).toContain(word);
    }
    expect(text).toContain('x402');
    expect(text).toContain('not supported yet');
  });
});
