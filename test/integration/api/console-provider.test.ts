// The console's Catalog and Provider sections over plain HTTP (no browser), against the full stack (Postgres,
// Temporal with the worker, SMTP capture) and a loopback upstream: empty states, the CSRF check, a person without
// provider:write, bad form input (400, message shown, form kept), and the provider flow from the forms: create,
// credential, prices (dollars → cents), verify, publish, then the catalog's search, listing, category and board pages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { csrfOf, FormBrowser, type PageResponse } from '../../helpers/form-browser.js';
import { startFullStack, type FullStack } from '../../helpers/full-stack.js';
import { signInByMail } from '../../helpers/console-forms.js';
import { startStripeMock, type StripeMock } from '../../helpers/stripe-mock.js';
import type { Upstream } from '../../helpers/upstream.js';
import { startOpenApiUpstream } from '../../helpers/openapi-upstream.js';

describe('console: Catalog and Provider', () => {
  let s: FullStack;
  let upstream: Upstream;
  let stripe: StripeMock;
  let provider: Person;
  let browser: FormBrowser;

  /** Sign in through /login with the mailed code, as a person would; the jar then holds the session cookie. */
  const signIn = async (email: string) => (await signInByMail(s.base, s.smtp, email, '/console/provider')).browser;

  /** POST a console form with the page's CSRF token (read from `from`). */
  async function submit(b: FormBrowser, from: string, action: string, form: Record<string, string>) {
    const page = await b.request('GET', from);
    return b.request('POST', action, { csrf: csrfOf(page.text), ...form });
  }
  /** The provider's new-API form on /console/provider. */
  const createApi = (form: Record<string, string>) =>
    submit(browser, '/console/provider', '/console/provider/apis', form);

  const expectPage = (res: PageResponse, status: number) => {
    expect(res.status, res.text.slice(0, 2000)).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
  };
  /** A `status` page holding each of `shown` (a text it contains or a pattern it matches), in order. */
  const expectShown = (res: PageResponse, status: number, shown: (string | RegExp)[]) => {
    expectPage(res, status);
    for (const s of shown) {
      if (typeof s === 'string') expect(res.text).toContain(s);
      else expect(res.text).toMatch(s);
    }
  };

  beforeAll(async () => {
    upstream = await startOpenApiUpstream((req, res) => {
      res.writeHead(req.url?.startsWith('/v1/') ? 200 : 404, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    stripe = await startStripeMock();
    s = await startFullStack({
      env: { UPSTREAM_ALLOW_PRIVATE: 'true', STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_API_BASE: stripe.url },
    });
    provider = await createPerson(s.services);
    browser = await signIn(provider.email);
  });
  afterAll(async () => {
    await s?.close();
    await upstream?.close();
    await stripe?.stop();
  });

  it('without a session every page sends the person to sign in and back', async () => {
    const anonymous = new FormBrowser(s.base, 'http://leaves.invalid');
    for (const path of ['/console/catalog', '/console/provider', '/console/provider/analytics']) {
      const res = await anonymous.request('GET', path);
      expect(res.status).toBe(303);
      expect(res.location).toBe(`/login?next=${encodeURIComponent(path)}`);
    }
  });

  it('shows clear empty states: no APIs, no documents, no requests, no search results, no analytics', async () => {
    const emptyStates: [string, string[]][] = [
      ['/console/provider', ['You have no APIs yet', 'Create API']],
      ['/console/provider/documents', ['No documents yet']],
      ['/console/provider/requests', ['No open requests']],
      ['/console/provider/analytics', ['No calls in this range', 'No APIs yet']],
      [
        '/console/catalog?q=quantum+teleportation+broker',
        ['No API matches “quantum teleportation broker”', 'Request this API'],
      ],
      ['/console/catalog/categories/weather', ['No live API in Weather yet']],
      ['/console/catalog/leaderboards/top_grossing', ['No API is ranked on this board yet']],
    ];
    for (const [path, shown] of emptyStates) expectShown(await browser.request('GET', path), 200, shown);
  });

  it('refuses a form without the CSRF token (403 page) and unknown pages with 404 pages', async () => {
    const res = await browser.request('POST', '/console/provider/apis', { name: 'x', slug: 'x' });
    expectPage(res, 403);
    expect(res.text).toContain('This form has expired');

    expectPage(await browser.request('GET', '/console/catalog/apis/no-such-api'), 404);
    expectPage(await browser.request('GET', '/console/catalog/categories/no-such-category'), 404);
    expectPage(await browser.request('GET', '/console/catalog/leaderboards/no-such-board'), 404);
    expectPage(await browser.request('GET', '/console/provider/apis/api_doesnotexist'), 404);
  });

  it('a person without provider:write sees a clear page on Provider, not an error', async () => {
    const consumer = await createPerson(s.services, { verified: false });
    const cookie = `svc_session=${consumer.session}; svc_csrf=${'A'.repeat(32)}`;
    const page = await fetch(`${s.base}/console/provider`, { headers: { cookie }, redirect: 'manual' });
    expect(page.status).toBe(403);
    const text = await page.text();
    expect(text).toContain('Listing your own APIs needs a verified email address');
    expect(text).toContain('Browse the catalog');
    const post = await fetch(`${s.base}/console/provider/apis`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${'A'.repeat(32)}&name=x&slug=x&summary=x&base_url=${encodeURIComponent(upstream.url)}`,
      redirect: 'manual',
    });
    expect(post.status).toBe(403);
    expect(await post.text()).toContain('verified email');
    // The catalog is for everyone signed in.
    expect((await fetch(`${s.base}/console/catalog`, { headers: { cookie }, redirect: 'manual' })).status).toBe(200);
  });

  it('bad form input answers 400 with the message and keeps what was typed', async () => {
    // [name, slug, summary, base_url, endpoints] of a new API, and what its 400 page shows.
    const v1 = `${upstream.url}/v1`;
    const badApis: [[string, string, string, string, string], (string | RegExp)[]][] = [
      [
        ['Keep Me', 'keep-me', 'A summary to keep', 'not a url', 'GET /v1/x 0.05'],
        [
          /role="alert">Upstream base URL: /,
          'value="Keep Me"',
          'value="A summary to keep"',
          'GET /v1/x 0.05</textarea>',
        ],
      ],
      [
        ['Neg', 'neg', 'Negative price', v1, 'GET /v1/x -1'],
        ['Endpoints, line 1, price: a price cannot be negative', 'value="Neg"'],
      ],
      [['Bad slug', 'Bad Slug!', 'x', v1, 'GET /x'], ['Slug: must be 1-64 lower-case letters']],
    ];
    for (const [[name, slug, summary, base_url, endpoints], shown] of badApis) {
      const form = { name, slug, summary, base_url, endpoints };
      expectShown(await createApi(form), 400, shown);
    }

    const emptyRequest = await submit(browser, '/console/catalog', '/console/catalog/requests', { query: '' });
    expectShown(emptyRequest, 400, [/role="alert">Query: /]);
    const badSearch = await browser.request('GET', '/console/catalog?max_price=-2');
    expectShown(badSearch, 400, ['max_price: a price cannot be negative']);
  });

  it('creates, prices, verifies and publishes from the forms; the catalog then shows the API', async () => {
    const created = await createApi({
      name: 'Console Weather',
      slug: 'console-weather',
      summary: 'Forecasts made from the console',
      base_url: `${upstream.url}/v1`,
      category: 'weather',
      endpoints: 'GET /forecast 0.05 Today’s forecast\nGET /health',
    });
    expect(created.status, created.text).toBe(303);
    expect(created.location).toMatch(/^\/console\/provider\/apis\/api_\w+\?done=created$/);
    const apiPath = created.location!.split('?')[0]!;
    const apiId = apiPath.split('/').pop()!;

    const detail = await browser.request('GET', created.location!);
    expectPage(detail, 200);
    expect(detail.text).toContain('API created as a draft');
    expect(detail.text).toMatch(/<span class="badge ">draft<\/span>/);

    // Credential: saved, never shown back.
    const cred = await submit(browser, apiPath, `${apiPath}/credentials`, {
      secret: 'console-secret-42',
      injection: 'bearer',
      injection_name: '',
    });
    expect(cred.status, cred.text).toBe(303);
    const afterCred = await browser.request('GET', apiPath);
    expect(afterCred.text).toContain('A credential is set (bearer');
    expect(afterCred.text).not.toContain('console-secret-42');

    // Prices: dollars in the form, integer cents stored; a negative price is a 400 that keeps the typed values.
    const [health] = await sql<{ id: string }>(s.db.url, `select id from endpoints where api_id = $1 and path = $2`, [
      apiId,
      '/health',
    ]);
    const [forecast] = await sql<{ id: string }>(s.db.url, `select id from endpoints where api_id = $1 and path = $2`, [
      apiId,
      '/forecast',
    ]);
    const badPrice = await submit(browser, apiPath, `${apiPath}/pricing`, {
      [`price_${forecast!.id}`]: '-0.10',
      [`price_${health!.id}`]: '0.00',
    });
    expectPage(badPrice, 400);
    expect(badPrice.text).toContain('Price of GET /forecast: a price cannot be negative');
    expect(badPrice.text).toContain('value="-0.10"');
    const priced = await submit(browser, apiPath, `${apiPath}/pricing`, {
      [`price_${forecast!.id}`]: '$0.07',
      [`price_${health!.id}`]: '0',
    });
    expect(priced.status, priced.text).toBe(303);
    expect(priced.location).toBe(`${apiPath}?done=priced`);
    const prices = await sql<{ path: string; price_cents: string }>(
      s.db.url,
      'select path, price_cents from endpoints where api_id = $1 order by path',
      [apiId],
    );
    expect(prices).toEqual([
      { path: '/forecast', price_cents: '7' },
      { path: '/health', price_cents: '0' },
    ]);

    const verified = await submit(browser, apiPath, `${apiPath}/verify`, {});
    expect(verified.location).toBe(`${apiPath}?done=verified`);
    const afterVerify = await browser.request('GET', verified.location!);
    expect(afterVerify.text).toContain('Smoke test <strong class="ok">passed</strong>');
    expect(upstream.seen.some((r) => r.headers.authorization === 'Bearer console-secret-42')).toBe(true);

    const noTerms = await submit(browser, apiPath, `${apiPath}/publish`, {});
    expectPage(noTerms, 400);
    expect(noTerms.text).toContain('Tick “I accept the provider terms” to publish.');

    const published = await submit(browser, apiPath, `${apiPath}/publish`, { accept_terms: 'yes' });
    expect(published.location).toBe(`${apiPath}?done=published`);
    const live = await browser.request('GET', published.location!);
    expect(live.text).toContain('Published: the API is live');
    expect(live.text).toMatch(/<span class="badge ok">live<\/span>/);

    const list = await browser.request('GET', '/console/provider');
    expect(list.text).toContain('Console Weather');

    // The catalog: search, listing page (endpoints, prices, stats chart, terms link), category, boards. Search answers
    // from a copy refreshed at most every 0.4 s: wait for it to hold the publish (docs/testing.md).
    await s.services.search.sync(true);
    const search = await browser.request('GET', '/console/catalog?q=console+weather&sort=relevance&limit=10');
    expectPage(search, 200);
    expect(search.text).toContain('href="/console/catalog/apis/console-weather"');
    expect(search.text).toContain('Free – $0.07 / call');
    const directoryOnly = await browser.request('GET', '/console/catalog?q=console+weather&source=directory');
    expect(directoryOnly.text).not.toContain('href="/console/catalog/apis/console-weather"');
    // The price range compares the cheapest PAID endpoint (issue 31): its free /health does not make it "free".
    const upTo7 = await browser.request('GET', '/console/catalog?category=weather&max_price=0.07');
    expect(upTo7.text).toContain('href="/console/catalog/apis/console-weather"');
    const upTo6 = await browser.request('GET', '/console/catalog?category=weather&max_price=0.06');
    expect(upTo6.text).not.toContain('href="/console/catalog/apis/console-weather"');

    const listing = await browser.request('GET', '/console/catalog/apis/console-weather');
    expectPage(listing, 200);
    expect(listing.text).toContain('<code>/forecast</code>');
    expect(listing.text).toContain('$0.07');
    expect(listing.text).toContain('Calls by period');
    expect(listing.text).toContain('href="/terms/console-weather"');

    const category = await browser.request('GET', '/console/catalog/categories/weather');
    expect(category.text).toContain('href="/console/catalog/apis/console-weather"');

    // A price increase on a live API is scheduled, shown on both sides, and can be cancelled.
    const raised = await submit(browser, apiPath, `${apiPath}/pricing`, { [`price_${forecast!.id}`]: '0.09' });
    expect(raised.location).toBe(`${apiPath}?done=scheduled`);
    const scheduled = await browser.request('GET', apiPath);
    expect(scheduled.text).toMatch(/<td class="num">\$0\.07<\/td><td class="num">\$0\.09<\/td>/);
    const publicSide = await browser.request('GET', '/console/catalog/apis/console-weather');
    expect(publicSide.text).toMatch(/\$0\.09 from \d{4}-\d{2}-\d{2}/);
    const cancelled = await submit(browser, apiPath, `${apiPath}/endpoints/${forecast!.id}/cancel-price`, {});
    expect(cancelled.location).toBe(`${apiPath}?done=cancelled`);
    expect((await browser.request('GET', apiPath)).text).toContain('No scheduled price changes.');
  });

  it('documents: add a draft, activate it; requests for missing APIs reach providers', async () => {
    const added = await submit(browser, '/console/provider/documents', '/console/provider/documents', {
      kind: 'terms',
      version: '1.0',
      title: 'Console terms',
      acceptance_mode: 'optional',
      api_id: '',
      body: '# Terms\n\nBe kind.',
    });
    expect(added.status, added.text).toBe(303);
    const docs = await browser.request('GET', '/console/provider/documents?done=document');
    expect(docs.text).toContain('Console terms');
    const documentId = /documents\/(doc\w+)\/activate/.exec(docs.text)?.[1];
    expect(documentId, docs.text).toBeTruthy();
    const activated = await submit(
      browser,
      '/console/provider/documents',
      `/console/provider/documents/${documentId}/activate`,
      {},
    );
    expect(activated.location).toBe('/console/provider/documents?done=activated');
    expect((await browser.request('GET', '/console/provider/documents')).text).toMatch(/badge ok">active</);

    const asked = await submit(browser, '/console/catalog', '/console/catalog/requests', {
      query: 'tide tables for harbours',
    });
    expect(asked.location).toBe('/console/catalog?done=requested');
    const requests = await browser.request('GET', '/console/provider/requests');
    expect(requests.text).toContain('tide tables for harbours');
  });

  it('imports endpoints from an OpenAPI URL and edits the details (a bad URL is a 400 that keeps the input)', async () => {
    const created = await createApi({
      name: 'Imported Weather',
      slug: 'imported-weather',
      summary: 'Imported from OpenAPI',
      base_url: `${upstream.url}/v2`,
      openapi_url: `${upstream.url}/openapi.json`,
      endpoints: 'GET /health 0.01',
    });
    expect(created.status, created.text).toBe(303);
    const apiPath = created.location!.split('?')[0]!;
    const page = await browser.request('GET', apiPath);
    expect(page.text).toContain('Imported from');
    for (const p of ['/alerts', '/forecast/{city}', '/health']) expect(page.text).toContain(`<code>${p}</code>`);
    expect(page.text).toMatch(/<code>\/health<\/code><\/label>[\s\S]*?value="0\.01"/);

    const bad = await submit(browser, apiPath, apiPath, {
      name: 'Renamed',
      summary: 'Imported from OpenAPI',
      base_url: `${upstream.url}/v2`,
      docs_url: 'ftp://docs',
      tags: 'weather, alerts',
      category: '',
    });
    expectPage(bad, 400);
    expect(bad.text).toContain('Documentation URL: must be an http or https URL');
    expect(bad.text).toContain('value="Renamed"');
    const saved = await submit(browser, apiPath, apiPath, {
      name: 'Renamed',
      summary: 'Imported from OpenAPI',
      base_url: `${upstream.url}/v2`,
      docs_url: 'https://docs.example.com',
      tags: 'weather, alerts',
      category: 'weather',
    });
    expect(saved.location).toBe(`${apiPath}?done=details`);
    const [row] = await sql<{ name: string; tags: string[]; category: string; docs_url: string }>(
      s.db.url,
      'select name, tags, category, docs_url from apis where slug = $1',
      ['imported-weather'],
    );
    expect(row).toEqual({
      name: 'Renamed',
      tags: ['weather', 'alerts'],
      category: 'weather',
      docs_url: 'https://docs.example.com/',
    });
  });

  it('Connect: the section shows the onboarding status and hands out the Stripe link', async () => {
    const before = await browser.request('GET', '/console/provider');
    expect(before.text).toMatch(/badge ">none</);
    expect(before.text).toContain('Start payouts onboarding');
    const started = await submit(browser, '/console/provider', '/console/provider/connect', {});
    expectPage(started, 200);
    expect(started.text).toMatch(/<a class="button" href="https:\/\/[^"]+"[^>]*>Continue to Stripe<\/a>/);
    const after = await browser.request('GET', '/console/provider');
    expect(after.text).toMatch(/badge ">pending</);
    expect(after.text).toContain('Continue onboarding');
  });

  it('an action on an API that is not the person’s own is a 404 page with a way back', async () => {
    const other = await createPerson(s.services);
    const theirs = await s.services.providers.create(
      {
        type: 'session',
        orgId: other.orgId,
        sessionId: 'x',
        userId: other.userId,
        role: 'owner',
        emailVerified: true,
        scopes: ['provider:write'],
      },
      {
        name: 'Theirs',
        slug: 'theirs',
        summary: 'Not yours',
        base_url: `${upstream.url}/v1`,
        endpoints: [{ method: 'GET', path: '/x' }],
      },
    );
    expectPage(await browser.request('GET', `/console/provider/apis/${theirs.api_id}`), 404);
    const res = await submit(browser, '/console/provider', `/console/provider/apis/${theirs.api_id}/verify`, {});
    expectPage(res, 404);
    expect(res.text).toContain('href="/console/provider">Back to my APIs');
  });
});
