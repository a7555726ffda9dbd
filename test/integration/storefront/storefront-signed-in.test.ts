// A signed-in person on the storefront (issue 31): the listing page shows their key context (the keys that can call
// it, or the step to create one) and the quote with one of their keys gives the gateway's own decision for it. The
// console's catalog is the same listing page (one implementation) in the console's frame, linking within the console.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../../core/auth/scopes.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { http, describe as show } from '../../helpers/http.js';
import { startStorefront, type StorefrontFixture } from './storefront-fixture.js';

describe('storefront for a signed-in person', () => {
  let f: StorefrontFixture;
  let consumer: Person;
  let keyless: Person;

  beforeAll(async () => {
    f = await startStorefront();
    consumer = await createPerson(f.stack.services);
    keyless = await createPerson(f.stack.services, { scopes: SCOPES.filter((s) => s !== 'proxy:call') });
  }, 120_000);
  afterAll(async () => {
    await f?.close();
  });

  const as = (p: Person, path: string) =>
    http(f.api.url, 'GET', path, { headers: { cookie: `svc_session=${p.session}`, accept: 'text/html' } });

  it('the listing page names their keys that can call it, or says to create one', async () => {
    const mine = await as(consumer, '/apis/fjord-forecasts');
    expect(mine.status, show(mine)).toBe(200);
    expect(mine.text).toContain('Call it with your key');
    const prefix = consumer.apiKey.slice(0, 12);
    expect(mine.text).toContain(`<strong>test</strong> <code>`);
    expect(mine.text).toContain(`<option value="${consumer.keyId}">test (`);
    expect(mine.text).toContain(prefix.slice(0, 9));
    const none = await as(keyless, '/apis/fjord-forecasts');
    expect(none.text).toContain('Create a key to call it');
    // Keys offers the way back to this listing once the key exists.
    expect(none.text).toContain('href="/console/keys?next=%2Fapis%2Ffjord-forecasts"');
    expect(none.text).not.toContain('name="key"');
  });

  it('a quote with one of their keys gives the gateway’s decision; another org’s key is refused', async () => {
    const refused = await as(
      consumer,
      `/apis/fjord-forecasts/quote?endpoint=GET+%2Fforecast%2Fbergen&key=${consumer.keyId}`,
    );
    expect(refused.status, show(refused)).toBe(200);
    expect(refused.text).toContain(
      'The gateway would refuse this call with your key <strong>test</strong>: 402 <code>payment_required</code>',
    );
    const free = await as(consumer, `/apis/fjord-forecasts/quote?endpoint=GET+%2Fhealth&key=${consumer.keyId}`);
    expect(free.text).toContain('The gateway would accept this call with your key <strong>test</strong> now.');
    const own = await as(f.provider, `/apis/fjord-forecasts/quote?endpoint=GET+%2Fhealth&key=${f.provider.keyId}`);
    expect(own.text).toContain('<code>forbidden</code>');
    expect(own.text).toContain('cannot call its own API');
    const stolen = await as(consumer, `/apis/fjord-forecasts/quote?endpoint=GET+%2Fhealth&key=${f.provider.keyId}`);
    expect(stolen.status).toBe(403);
    expect(stolen.text).toContain('pick one of your own keys');
    const anonymous = await http(
      f.api.url,
      'GET',
      `/apis/fjord-forecasts/quote?endpoint=GET+%2Fhealth&key=${consumer.keyId}`,
    );
    expect(anonymous.status).toBe(403);
  });

  it('the console catalog renders the same listing page, in the console frame and linking within the console', async () => {
    const store = await as(consumer, '/apis/fjord-forecasts');
    const console = await as(consumer, '/console/catalog/apis/fjord-forecasts');
    expect(console.status, show(console)).toBe(200);
    expect(console.text).toContain('aria-label="Console"');
    expect(console.text).toContain('href="/console/catalog/categories/weather"');
    expect(console.text).toContain('action="/console/catalog/apis/fjord-forecasts/quote"');
    /** The listing's body: from its back link to the end of its terms. */
    const body = (html: string) =>
      /<p><a href="[^"]*">← All APIs<\/a><\/p>[\s\S]*?<h2 id="terms-h">[\s\S]*?<\/section>/.exec(html)?.[0];
    const unprefixed = body(console.text)!
      .replace(/\/console\/catalog\/apis\//g, '/apis/')
      .replace(/next=%2Fconsole%2Fcatalog%2Fapis%2F/g, 'next=%2Fapis%2F')
      .replace(/\/console\/catalog\/categories\//g, '/categories/')
      .replace(/\/console\/catalog\/leaderboards/g, '/leaderboards')
      .replace(/"\/console\/catalog(["?])/g, '"/apis$1');
    expect(unprefixed).toBe(body(store.text));
    const quote = await as(consumer, '/console/catalog/apis/fjord-forecasts/quote?endpoint=POST+%2Falerts');
    expect(quote.status).toBe(200);
    expect(quote.text).toMatch(/Price now<\/th><td>\$0\.12/);
  });
});
