// The storefront's caching and its per-address limit (issue 31): an anonymous visitor's page is public with an ETag
// and answers 304 to a matching If-None-Match; a signed-in person's is private and never stored; a page another
// person sees differs. Public reads (pages and the public catalog JSON routes) are limited per client address
// (PUBLIC_RATE_LIMIT_PER_MIN, behind TRUST_PROXY_HOPS like every per-address limit): over it, 429 with Retry-After,
// a page on the storefront and the envelope on JSON; another address is not affected. A 410 from the listing
// (an archived API) is a 410 page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS_CACHE_CONTROL, SIGNED_IN_CACHE_CONTROL } from '../../../api/pages/storefront/frame.js';
import { AppError } from '../../../core/errors.js';
import { expectFailure, http, describe as show } from '../../helpers/http.js';
import { startStorefront, type StorefrontFixture } from './storefront-fixture.js';

const LIMIT = 12;

describe('storefront caching', () => {
  let f: StorefrontFixture;

  beforeAll(async () => {
    f = await startStorefront();
  }, 120_000);
  afterAll(async () => {
    await f?.close();
  });

  const PAGES = [
    '/apis',
    '/apis/fjord-forecasts',
    '/providers/fjord-labs',
    '/categories/weather',
    '/leaderboards',
    '/market',
    '/sitemap.xml',
    '/robots.txt',
    '/llms.txt',
  ];

  it('an anonymous answer is public with an ETag, and a matching If-None-Match is a 304 without a body', async () => {
    for (const path of PAGES) {
      const first = await http(f.api.url, 'GET', path);
      expect(first.status, `${path}: ${show(first)}`).toBe(200);
      expect(first.headers.get('cache-control'), path).toBe(ANONYMOUS_CACHE_CONTROL);
      expect(first.headers.get('vary'), path).toBe('Cookie');
      const etag = first.headers.get('etag');
      expect(etag, path).toMatch(/^W\/"[\w-]{27}"$/);
      const again = await http(f.api.url, 'GET', path, { headers: { 'if-none-match': etag! } });
      expect(again.status, path).toBe(304);
      expect(again.text).toBe('');
      const stale = await http(f.api.url, 'GET', path, { headers: { 'if-none-match': 'W/"something-else"' } });
      expect(stale.status, path).toBe(200);
    }
  });

  it('a new listing changes the page, so its ETag changes', async () => {
    const before = await http(f.api.url, 'GET', '/sitemap.xml');
    await f.stack.services.providerLifecycle.setStatus(f.ids['draft-drizzle']!, 'live');
    const after = await http(f.api.url, 'GET', '/sitemap.xml', {
      headers: { 'if-none-match': before.headers.get('etag')! },
    });
    expect(after.status).toBe(200);
    expect(after.text).toContain('/apis/draft-drizzle');
    await f.stack.services.providerLifecycle.setStatus(f.ids['draft-drizzle']!, 'draft');
  });

  it('a signed-in person gets a private page (their header and keys), never a 304 from a shared ETag', async () => {
    const cookie = `svc_session=${f.provider.session}`;
    const anonymous = await http(f.api.url, 'GET', '/apis/fjord-forecasts');
    const mine = await http(f.api.url, 'GET', '/apis/fjord-forecasts', {
      headers: { cookie, 'if-none-match': anonymous.headers.get('etag')! },
    });
    expect(mine.status).toBe(200);
    expect(mine.headers.get('cache-control')).toBe(SIGNED_IN_CACHE_CONTROL);
    expect(mine.headers.get('etag')).toBeNull();
    expect(mine.text).toContain(f.provider.email);
    expect(mine.text).toContain('href="/console"');
    // Their key context: the person's keys that can call it, not the visitor's sign-up step.
    expect(mine.text).toContain('Call it with your key');
    expect(mine.text).not.toContain('Sign up to call it');
    expect(anonymous.text).toContain('Sign up to call it');
  });

  it('a 410 from the listing (an archived API) is a 410 page', async () => {
    const { listings } = f.stack.services;
    const page = listings.page.bind(listings);
    listings.page = (slug: string) => {
      if (slug !== 'fjord-forecasts') return page(slug);
      const gone = new AppError('not_found', 'The API fjord-forecasts was archived by its provider on 2026-11-28.');
      Object.assign(gone, { status: 410 });
      return Promise.reject(gone);
    };
    try {
      const res = await http(f.api.url, 'GET', '/apis/fjord-forecasts');
      expect(res.status, show(res)).toBe(410);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.text).toContain('<h1>Gone</h1>');
      expect(res.text).toContain('was archived by its provider');
    } finally {
      listings.page = page;
    }
  });
});

describe('storefront per-address limit', () => {
  let f: StorefrontFixture;

  beforeAll(async () => {
    f = await startStorefront({ PUBLIC_RATE_LIMIT_PER_MIN: String(LIMIT), TRUST_PROXY_HOPS: '1' });
  }, 120_000);
  afterAll(async () => {
    await f?.close();
  });

  const from = (ip: string) => ({ 'x-forwarded-for': ip });

  it('pages and public catalog JSON reads share the limit per address; over it, 429 with Retry-After', async () => {
    const ip = '203.0.113.7';
    const paths = [
      '/apis',
      '/v1/search?q=fjord',
      '/apis/fjord-forecasts',
      '/v1/apis/fjord-forecasts',
      '/v1/categories',
    ];
    for (let i = 0; i < LIMIT; i++) {
      const res = await http(f.api.url, 'GET', paths[i % paths.length]!, { headers: from(ip) });
      expect(res.status, `${i}: ${show(res)}`).toBe(200);
    }
    const page = await http(f.api.url, 'GET', '/apis/fjord-forecasts', { headers: from(ip) });
    expect(page.status).toBe(429);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(Number(page.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(page.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(page.text).toContain('<h1>Too many requests</h1>');
    const json = await http(f.api.url, 'GET', '/v1/search?q=fjord', { headers: from(ip) });
    expectFailure(json, 429, 'rate_limited');
    expect(Number(json.headers.get('retry-after'))).toBeGreaterThan(0);
    const file = await http(f.api.url, 'GET', '/sitemap.xml', { headers: from(ip) });
    expect(file.status).toBe(429);
    // Another address is not affected; a signed-in person's own routes (not public reads) are not counted.
    expect((await http(f.api.url, 'GET', '/apis', { headers: from('203.0.113.8') })).status).toBe(200);
    const me = await http(f.api.url, 'GET', '/v1/me', { token: f.provider.apiKey, headers: from(ip) });
    expect(me.status).toBe(200);
  });
});
