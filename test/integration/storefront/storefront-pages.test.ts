// The storefront's pages for a visitor who is not signed in (issue 31, section 1): the home page leads to them;
// /apis searches and browses with every filter, sort and page; a listing's page shows everything a buyer reads
// (endpoints with prices, discounts and scheduled changes, schemas, terms, stats, the six boards' ranks, snippets, the
// quote form and the sign-up step); a directory entry says it is not callable here; providers, categories, the
// boards and the market have pages; a gone listing is a 404 page. All server-rendered HTML, no script.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOARDS } from '../../../core/catalog/rollups/rollups.scoring.js';
import { http, describe as show, type HttpResult } from '../../helpers/http.js';
import { FJORD, startStorefront, type StorefrontFixture } from './storefront-fixture.js';

describe('storefront pages, anonymous', () => {
  let f: StorefrontFixture;

  beforeAll(async () => {
    f = await startStorefront();
  }, 120_000);
  afterAll(async () => {
    await f?.close();
  });

  const page = async (path: string, status = 200): Promise<HttpResult> => {
    const res = await http(f.api.url, 'GET', path, { headers: { accept: 'text/html' } });
    expect(res.status, `${path}: ${show(res)}`).toBe(status);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.text).not.toMatch(/<script(?! type="application\/ld\+json")/);
    return res;
  };
  /** The links of a page's `<a href>`, as written. */
  const links = (html: string) =>
    [...html.matchAll(/<a [^>]*href="([^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));

  it('the home page leads to the storefront: all APIs, the boards, the market, and a search form', async () => {
    const home = await page('/');
    expect(links(home.text)).toEqual(expect.arrayContaining(['/apis', '/leaderboards', '/market', '/llms.txt']));
    expect(home.text).toContain('<form method="get" action="/apis" role="search">');
  });

  it('/catalog, where people look first, is the storefront search (its canonical URL /apis), the query kept', async () => {
    const res = await fetch(`${f.api.url}/catalog?q=fjord`, { redirect: 'manual' });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(`<link rel="canonical" href="${f.stack.services.config.urls.publicBase}/apis">`);
    expect(html).toMatch(/<input[^>]*name="q"[^>]*value="fjord"/);
  });

  it('/apis browses every live listing (directory entry included, drafts and unpublished not) and links each', async () => {
    const res = await page('/apis');
    for (const slug of [
      'fjord-forecasts',
      'free-fjord-facts',
      'pricey-fjord-pixels',
      'nameless-narwhal',
      f.directorySlug,
    ]) {
      expect(res.text, slug).toContain(`href="/apis/${slug}"`);
    }
    expect(res.text).not.toContain('/apis/draft-drizzle');
    expect(res.text).not.toContain('/apis/gone-gale');
    expect(res.text).toContain('5 APIs · showing 1–5');
    expect(res.text).toContain('<td>Fjord Labs</td>'); // the provider's name (its page is linked from the listing)
    expect(res.text).toContain('Directory entry: not callable');
    // Every sort is offered, and the filters.
    for (const sort of ['svc_score', 'price', 'relevance', 'new', 'calls', 'gmv', 'reliability', 'value', 'momentum']) {
      expect(res.text).toContain(`<option value="${sort}"`);
    }
    for (const field of [
      'name="q"',
      'name="category"',
      'name="pricing"',
      'name="min_price"',
      'name="max_price"',
      'name="callable"',
    ]) {
      expect(res.text).toContain(field);
    }
  });

  /** The listing slugs a search page shows, in order. */
  const shown = async (query: string) =>
    [...(await page(`/apis?${query}`)).text.matchAll(/<td><a href="\/apis\/([a-z0-9-]+)">/g)].map((m) => m[1]!);

  it('/apis searches with the hybrid search and filters by category, callable, free or paid and a price range', async () => {
    expect((await shown('q=fjord+weather+forecast'))[0]).toBe('fjord-forecasts');
    expect(await shown('category=weather')).toEqual(['fjord-forecasts']);
    expect((await shown('callable=true')).sort()).toEqual(
      ['fjord-forecasts', 'free-fjord-facts', 'nameless-narwhal', 'pricey-fjord-pixels'].sort(),
    );
    expect(await shown('pricing=free')).toEqual(['free-fjord-facts']);
    expect((await shown('pricing=paid')).sort()).toEqual(['fjord-forecasts', 'pricey-fjord-pixels']);
    // Over the cheapest PAID endpoint: Fjord's is $0.05 (its free /health does not count), Pricey's $0.20.
    expect((await shown('min_price=0.05&max_price=0.10')).sort()).toEqual(['fjord-forecasts']);
    expect((await shown('min_price=0.06')).sort()).toEqual(['pricey-fjord-pixels']);
    expect((await shown('max_price=0.04')).sort()).toEqual(['free-fjord-facts']);
    expect(await shown('sort=price&pricing=paid')).toEqual(['fjord-forecasts', 'pricey-fjord-pixels']);
    const bad = await page('/apis?min_price=0.50&max_price=0.10', 400);
    expect(bad.text).toContain('min_price: the lowest price is above the highest');
    expect((await page('/apis?max_price=-1', 400)).text).toContain('max_price: a price cannot be negative');
  });

  it('/apis pages through results with previous and next links that keep the filters', async () => {
    const first = await page('/apis?callable=true&sort=price&limit=2');
    expect(first.text).toContain('4 APIs · showing 1–2 · sorted by Price (lowest first)');
    expect(first.text).not.toContain('rel="prev"');
    const next = /<a rel="next" href="([^"]+)">/.exec(first.text)?.[1]?.replace(/&amp;/g, '&');
    expect(next).toBe('/apis?callable=true&sort=price&limit=2&offset=2');
    const second = await page(next!);
    expect(second.text).toContain('4 APIs · showing 3–4');
    expect(second.text).not.toContain('rel="next"');
    expect(second.text).toContain('<a rel="prev" href="/apis?callable=true&amp;sort=price&amp;limit=2&amp;offset=0">');
    const seen = [
      ...first.text.matchAll(/<td><a href="\/apis\/([a-z0-9-]+)">/g),
      ...second.text.matchAll(/<td><a href="\/apis\/([a-z0-9-]+)">/g),
    ];
    expect(seen.map((m) => m[1]).sort()).toEqual([
      'fjord-forecasts',
      'free-fjord-facts',
      'nameless-narwhal',
      'pricey-fjord-pixels',
    ]);
  });

  it("a listing's page shows what a buyer reads, with snippets for the configured URLs and the sign-up step", async () => {
    const res = await page('/apis/fjord-forecasts');
    const t = res.text;
    expect(t).toContain('<h1>Fjord Forecasts</h1>');
    expect(t).toContain(FJORD.summary);
    expect(t).toContain(FJORD.description);
    expect(t).toContain('href="/providers/fjord-labs">Fjord Labs</a>');
    expect(t).toContain('href="/categories/weather">Weather</a>');
    for (const tag of FJORD.tags) expect(t).toContain(`href="/apis?q=${tag}">${tag}</a>`);
    expect(t).toContain('callable through the gateway');
    // Endpoints: method, path, price; schemas.
    expect(t).toContain('<code>/forecast/{city}</code>');
    expect(t).toContain('<code>POST</code></td><td><code>/alerts</code>');
    expect(t).toContain('$0.05');
    expect(t).toContain('$0.12');
    expect(t).toContain('Free');
    expect(t).toContain('Input schema');
    expect(t).toContain('&quot;example&quot;: &quot;bergen&quot;');
    expect(t).toContain('Output schema');
    // Stats, ranks on the six boards, GMV rank, terms.
    for (const label of ['Calls, 30 days', 'Success rate, 30 days', 'Latency p95, 30 days', 'GMV rank'])
      expect(t).toContain(label);
    expect(t).toContain('Last 24 hours');
    for (const label of ['Top grossing', 'Most used', 'Most reliable', 'Best value', 'Trending', 'New and rising']) {
      expect(t).toContain(`${label}</a>: not ranked`);
    }
    expect(t).toContain('Terms in force');
    // The snippets, with this deployment's gateway and MCP URLs and the example path.
    const { gateway, mcp } = f.stack.config.urls;
    expect(t).toContain(`curl -sS &#39;${gateway}/v1/proxy/fjord-forecasts/forecast/bergen?days=3&#39;`);
    expect(t).toContain('Authorization: Bearer $SVC_API_KEY');
    expect(t).toContain('process.env.SVC_API_KEY');
    expect(t).toContain(
      `npx svc --gateway-url &#39;${gateway}&#39; call fjord-forecasts GET &#39;/forecast/bergen&#39;`,
    );
    expect(t).toContain(`${mcp}/mcp`);
    expect(t).toContain('&quot;add_api_tools&quot;');
    // What a visitor does first, and the quote form.
    expect(t).toContain('Sign up to call it');
    expect(t).toContain('href="/signup?next=%2Fapis%2Ffjord-forecasts"');
    expect(t).toContain('<form class="filters" method="get" action="/apis/fjord-forecasts/quote">');
    expect(t).toContain('<option value="GET /forecast/bergen"');
  });

  it('the quote form answers with the price of the chosen endpoint', async () => {
    const res = await page('/apis/fjord-forecasts/quote?endpoint=POST+%2Falerts');
    expect(res.text).toContain('Quote: POST /alerts');
    expect(res.text).toMatch(/Price now<\/th><td>\$0\.12/);
    expect(res.text).toContain(`${f.stack.config.urls.gateway}/v1/proxy/fjord-forecasts/alerts`);
    const missing = await page('/apis/fjord-forecasts/quote?endpoint=GET+%2Fnope', 404);
    expect(missing.text).toContain('fjord-forecasts has no endpoint GET /nope');
  });

  it('a directory entry says plainly it is not callable here and links to its own site', async () => {
    const res = await page(`/apis/${f.directorySlug}`);
    expect(res.text).toContain('Directory entry: not callable here.');
    expect(res.text).toContain('href="https://tides.example.org/docs"');
    expect(res.text).not.toContain('Sign up to call it');
    expect(res.text).not.toContain('curl -sS');
  });

  it('drafts, unpublished and unknown listings are a 404 page', async () => {
    for (const slug of ['draft-drizzle', 'gone-gale', 'no-such-api']) {
      const res = await page(`/apis/${slug}`, 404);
      expect(res.text).toContain(`No live API with slug &quot;${slug}&quot;`);
      expect(res.text).toContain('href="/apis"');
    }
  });

  it("a provider's page: profile, badges, stats and live APIs; no page for an org without a public profile", async () => {
    const res = await page('/providers/fjord-labs');
    expect(res.text).toContain('<h1>Fjord Labs</h1>');
    expect(res.text).toContain('Weather and water APIs from Bergen.');
    expect(res.text).toContain('Verified email');
    expect(res.text).toContain('Calls, 30 days');
    for (const slug of ['fjord-forecasts', 'free-fjord-facts', 'pricey-fjord-pixels'])
      expect(res.text).toContain(`href="/apis/${slug}"`);
    // Each API's category by its name, as on the listing.
    expect(res.text).toContain('<a href="/categories/weather">Weather</a>');
    expect(res.text).not.toContain('gone-gale');
    await page('/providers/nobody-here', 404);
  });

  it('a category page lists its APIs and its boards', async () => {
    const res = await page('/categories/weather');
    expect(res.text).toContain('<h1>Weather</h1>');
    expect(res.text).toContain('href="/apis/fjord-forecasts"');
    expect(res.text).not.toContain('href="/apis/free-fjord-facts"');
    expect(res.text).toContain('href="/leaderboards/top_grossing?category=weather"');
    await page('/categories/no-such-category', 404);
  });

  it('the leaderboards: the six boards overall and per category, and one board in full', async () => {
    const all = await page('/leaderboards');
    for (const b of BOARDS) expect(all.text).toContain(`href="/leaderboards/${b}"`);
    const weather = await page('/leaderboards?category=weather');
    expect(weather.text).toContain('<h1>Leaderboards in Weather</h1>');
    // Metrics in words (the field name in code after them), a header a person reads.
    expect(all.text).toContain('Ranked by successful calls over 30 days (<code>successful_calls_30d</code>).');
    const one = await page('/leaderboards/most_used');
    expect(one.text).toContain('Leaderboard: Most used');
    expect(one.text).toContain('Ranked by successful calls over 30 days');
    await page('/leaderboards/no_such_board', 404);
  });

  it('the market: the overview for everyone, the activity feed only for a signed-in person', async () => {
    const res = await page('/market');
    expect(res.text).toContain('Live APIs');
    expect(res.text).toMatch(/Live APIs<\/div><div class="figure">5</);
    expect(res.text).toContain('Sign in</a> to see the activity feed');
    const signedIn = await http(f.api.url, 'GET', '/market', {
      headers: { cookie: `svc_session=${f.provider.session}` },
    });
    expect(signedIn.status).toBe(200);
    expect(signedIn.text).toContain('Fjord Forecasts</a> was published');
  });
});
