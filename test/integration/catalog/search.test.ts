// Catalog search and the directory (issue 11): the directory import (idempotent, categories, tags), GET /v1/search
// (shape, envelope, validation, every sort, filters), a listing published through the real lifecycle found by a
// paraphrase of its summary within 2 s and gone within 2 s of unpublish, edits re-indexed, and the gateway's 404 for
// directory listings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_SORTS } from '../../../core/catalog/search/search.schemas.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, serve, describe as show } from '../../helpers/http.js';
import { startFullStack, type FullStack } from '../../helpers/full-stack.js';
import { expectNoDrift } from '../../helpers/books.js';
import { closeAll } from '../../helpers/fixtures.js';

describe('catalog search and the directory', () => {
  let s: FullStack;
  let provider: Person;
  let consumer: Person;
  let gateway: GatewayHandler;
  let gatewayServer: RunningHttpServer;

  beforeAll(async () => {
    // No recurring schedules: a rollup landing between two reads (pages of the svc_score sort, the ranking's svc_score
    // prior) would change the answer under the test (docs/testing.md).
    s = await startFullStack({ env: { UPSTREAM_ALLOW_PRIVATE: 'true' }, schedules: false });
    provider = await createPerson(s.services);
    consumer = await createPerson(s.services);
    gateway = createGatewayHandler(s.services);
    gatewayServer = await serve(gateway);
  });
  afterAll(async () => {
    await expectNoDrift(gateway, s?.services);
    await closeAll(gatewayServer, gateway, s);
  });

  const get = (p: string) => http(s.base, 'GET', p);

  it('imports the directory: one live listing per entry, categories summing to 1,706, and a re-run changes nothing', async () => {
    const first = await s.services.directoryImport.importFile();
    expect(first).toMatchObject({ entries: 1706, inserted: 1706, updated: 0, unchanged: 0, skipped: [] });
    expect(first.indexed).toBe(1706);

    const counts = await sql<{ category: string; n: string }>(
      s.db.url,
      `select a.category, count(*) as n from apis a join categories c on c.slug = a.category
        where a.status = 'live' and a.source = 'directory' group by a.category`,
    );
    expect(counts.reduce((sum, r) => sum + Number(r.n), 0)).toBe(1706);
    expect(counts.length).toBe(52);

    const [weather] = await sql(
      s.db.url,
      `select a.slug, a.name, a.summary, a.tags, a.category, a.docs_url, a.base_url, a.source, p.display_name, p.bio
         from apis a join profiles p on p.org_id = a.org_id where a.slug = 'open-meteo'`,
    );
    expect(weather).toMatchObject({
      name: 'Open-Meteo',
      summary: 'Global weather forecast API for non-commercial use',
      category: 'weather',
      source: 'directory',
      display_name: 'Public APIs directory',
    });
    expect(weather!.tags).toEqual(expect.arrayContaining(['auth:none', 'https', 'cors:yes']));
    expect(weather!.docs_url).toMatch(/^https:\/\/open-meteo\.com/);
    expect(weather!.base_url).toBe(weather!.docs_url);
    expect(weather!.bio).toMatch(/MIT License/);

    const before = await sql<{ m: Date }>(s.db.url, `select max(updated_at) as m from apis where source = 'directory'`);
    const again = await s.services.directoryImport.importFile();
    expect(again).toMatchObject({ inserted: 0, updated: 0, unchanged: 1706, indexed: 0, skipped: [] });
    const after = await sql<{ m: Date; n: string }>(
      s.db.url,
      `select max(updated_at) as m, count(*) as n from apis where source = 'directory'`,
    );
    expect(after[0]!.m).toEqual(before[0]!.m);
    expect(Number(after[0]!.n)).toBe(1706);
  });

  it('finds by keyword and answers in the envelope with the documented item shape', async () => {
    const res = await get('/v1/search?q=weather%20forecast&limit=10');
    expect(res.status, show(res)).toBe(200);
    expect(res.body.ok).toBe(true);
    expect(res.body.meta).toMatchObject({ limit: 10, offset: 0, sort: 'relevance' });
    expect(res.body.meta.total, show(res)).toBeGreaterThan(10);
    expect(res.body.data).toHaveLength(10);
    const categories = res.body.data.map((i: { category: { slug: string } }) => i.category.slug);
    expect(categories.filter((c: string) => c === 'weather').length, show(res)).toBeGreaterThanOrEqual(7);
    const item = res.body.data[0];
    expect(Object.keys(item).sort()).toEqual(
      [
        'slug',
        'name',
        'summary',
        'category',
        'tags',
        'source',
        'callable',
        'docs_url',
        'price',
        'svc_score',
        'merit',
        'relevance',
        'provider',
      ].sort(),
    );
    expect(item).toMatchObject({
      source: 'directory',
      callable: false,
      price: { min_price_cents: null, max_price_cents: null, free: false },
      // A listing with no traffic scores 50, whether the rollup schedule has rated it yet or not.
      svc_score: 50,
      provider: { slug: 'public-apis', name: 'Public APIs directory' },
    });
    for (const part of ['reliability', 'latency', 'usage', 'value', 'freshness']) {
      expect(item.merit[part], part).toBeGreaterThanOrEqual(0);
      expect(item.merit[part], part).toBeLessThanOrEqual(1);
    }
    expect(item.relevance).toBeGreaterThan(0);
    expect(item.relevance).toBeLessThanOrEqual(1);
    const relevances = res.body.data.map((i: { relevance: number }) => i.relevance);
    expect(relevances).toEqual([...relevances].sort((a, b) => b - a));
  });

  it('tolerates typos (pg_trgm) and understands a paraphrase (vectors)', async () => {
    const typo = await get('/v1/search?q=wether%20forcast&limit=10');
    expect(typo.status, show(typo)).toBe(200);
    expect(
      typo.body.data.filter((i: { category: { slug: string } }) => i.category.slug === 'weather').length,
      show(typo),
    ).toBeGreaterThanOrEqual(3);
    // The keyword half alone finds them: the misspelt words are corrected against the index's lexicon (pg_trgm), and a
    // partial word too; a correctly spelled query has no corrections to make.
    const keywordOnly = async (q: string) => {
      const ranked = await s.services.search.rank(q, {}, 'keyword');
      const ids = [...ranked.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 10)
        .map(([id]) => id);
      const rows = await sql<{ category: string }>(
        s.db.url,
        `select category from apis where id in (select jsonb_array_elements_text($1::jsonb))`,
        [JSON.stringify(ids)],
      );
      return rows.filter((r) => r.category === 'weather').length;
    };
    expect(await keywordOnly('wether forcast')).toBeGreaterThanOrEqual(3);
    expect(await keywordOnly('weathe')).toBeGreaterThanOrEqual(3);
    const [known] = await sql<{ n: string }>(
      s.db.url,
      `select count(*) as n from search_lexicon where word in ('weather', 'forecast')`,
    );
    expect(Number(known!.n)).toBe(2);
    const shortLink = await get(`/v1/search?q=${encodeURIComponent('make a long link shorter')}&limit=10`);
    // The first answer shortens links (a URL shortener, or a file host that also shortens links).
    const first = shortLink.body.data[0] as { category: { slug: string }; summary: string } | undefined;
    expect(first?.category.slug === 'url-shorteners' || /shorten/i.test(first?.summary ?? ''), show(shortLink)).toBe(
      true,
    );
    expect(
      shortLink.body.data.filter((i: { category: { slug: string } }) => i.category.slug === 'url-shorteners').length,
      show(shortLink),
    ).toBeGreaterThanOrEqual(2);
  });

  it('browses without q: category filter, svc_score by default, pagination and total', async () => {
    const page1 = await get('/v1/search?category=weather&limit=20');
    expect(page1.status, show(page1)).toBe(200);
    expect(page1.body.meta).toMatchObject({ total: 37, total_exact: true, limit: 20, offset: 0, sort: 'svc_score' });
    expect(page1.body.data.every((i: { category: { slug: string } }) => i.category.slug === 'weather')).toBe(true);
    expect(page1.body.data[0]).not.toHaveProperty('relevance');
    const page2 = await get('/v1/search?category=weather&limit=20&offset=20');
    expect(page2.body.data).toHaveLength(17);
    const slugs = [...page1.body.data, ...page2.body.data].map((i: { slug: string }) => i.slug);
    expect(new Set(slugs).size).toBe(37);
    const all = await get('/v1/search?limit=500&source=directory');
    expect(all.body.meta, show(all)).toMatchObject({ total: 1706, total_exact: true });
    expect(all.body.data).toHaveLength(500);
  });

  it('answers every sort, with and without q', async () => {
    for (const sort of SEARCH_SORTS) {
      for (const q of ['', 'currency']) {
        const res = await get(`/v1/search?sort=${sort}&limit=5&q=${q}`);
        expect(res.status, `${sort} ${q}: ${show(res)}`).toBe(200);
        expect(res.body.meta.sort).toBe(sort);
        expect(res.body.data.length).toBe(5);
      }
    }
  });

  it('refuses bad input with 400 validation_failed, never 500', async () => {
    const bad = [
      '/v1/search?limit=501',
      '/v1/search?limit=0',
      '/v1/search?limit=abc',
      '/v1/search?offset=-1',
      '/v1/search?sort=best',
      `/v1/search?q=${'a'.repeat(501)}`,
      `/v1/search?q=${'x'.repeat(10_240)}`,
      '/v1/search?q=weather%00',
      '/v1/search?max_price_cents=-1',
      '/v1/search?source=elsewhere',
      '/v1/search?category=Not%20A%20Slug',
      '/v1/search?unknown=1',
    ];
    for (const p of bad) expectFailure(await get(p), 400, 'validation_failed');
    const sortError = await get('/v1/search?sort=best');
    expect(sortError.body.error.message).toMatch(/svc_score/);
    // Odd but valid text is just text.
    for (const q of ["'); drop table apis; --", '& | ! :*', '日本語 天気', '   ']) {
      const res = await get(`/v1/search?q=${encodeURIComponent(q)}`);
      expect(res.status, `${q}: ${show(res)}`).toBe(200);
    }
  });

  const providerApi = (method: string, p: string, body?: unknown) =>
    http(s.base, method, p, { token: provider.session, body });

  it('a published listing is found by a paraphrase of its summary within 2 s, and gone within 2 s of unpublish', async () => {
    const created = await providerApi('POST', '/v1/provider/apis', {
      name: 'Drizzle Watch',
      slug: 'drizzle-watch',
      summary: 'Predicts the chance of rain and snow for any town over the coming days',
      base_url: 'http://127.0.0.1:9/v1',
      category: 'weather',
      endpoints: [{ method: 'GET', path: '/outlook', price_cents: 2 }],
    });
    expect(created.status, show(created)).toBe(201);
    const apiId = created.body.data.api_id as string;
    const paraphrase = `/v1/search?q=${encodeURIComponent('will it be wet outside tomorrow in my city')}&limit=50`;
    const found = async () =>
      ((await get(paraphrase)).body.data as { slug: string }[]).some((i) => i.slug === 'drizzle-watch');
    expect(await found()).toBe(false);

    const published = await providerApi('POST', `/v1/provider/apis/${apiId}/publish`, {
      accept_terms: true,
      skip_verify: true,
    });
    expect(published.status, show(published)).toBe(200);
    const t0 = Date.now();
    while (!(await found()) && Date.now() - t0 < 2_000) await new Promise((r) => setTimeout(r, 50));
    expect(await found(), 'not found by paraphrase within 2 s of publish').toBe(true);
    expect(Date.now() - t0).toBeLessThanOrEqual(2_000);

    // Its price shows, and max_price_cents keeps it (directory listings have no endpoints, so no price).
    const cheap = await get('/v1/search?q=rain&max_price_cents=2');
    expect(
      cheap.body.data.map((i: { slug: string }) => i.slug),
      show(cheap),
    ).toEqual(['drizzle-watch']);
    expect(cheap.body.data[0]).toMatchObject({
      source: 'provider',
      price: { min_price_cents: 2, max_price_cents: 2, free: false },
      category: { slug: 'weather', name: 'Weather' },
    });
    expect((await get('/v1/search?q=rain&max_price_cents=1')).body.data).toEqual([]);

    // An edit is re-indexed: the new summary's words find it, within the copy's refresh (as publishing does: a
    // request never waits for a refresh, so the first one after the edit may still be answered from the old copy).
    const edited = await providerApi('PATCH', `/v1/provider/apis/${apiId}`, {
      summary: 'Predicts hailstorms and the chance of rain for any town over the coming days',
    });
    expect(edited.status, show(edited)).toBe(200);
    const hailstorms = () => get('/v1/search?q=hailstorms&limit=5');
    const t2 = Date.now();
    while ((await hailstorms()).body.data[0]?.slug !== 'drizzle-watch' && Date.now() - t2 < 2_000) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const hail = await hailstorms();
    expect(hail.body.data[0]?.slug, show(hail)).toBe('drizzle-watch');

    const unpublished = await providerApi('POST', `/v1/provider/apis/${apiId}/unpublish`);
    expect(unpublished.status, show(unpublished)).toBe(200);
    const t1 = Date.now();
    while ((await found()) && Date.now() - t1 < 2_000) await new Promise((r) => setTimeout(r, 50));
    expect(await found(), 'still found 2 s after unpublish').toBe(false);
    expect((await get('/v1/search?q=hailstorms&limit=5')).body.data.map((i: { slug: string }) => i.slug)).not.toContain(
      'drizzle-watch',
    );
  });

  it('price.free means every endpoint is free (as the detail says); a free endpoint alone shows as min_price_cents 0', async () => {
    const publish = async (slug: string, prices: number[]) => {
      const created = await providerApi('POST', '/v1/provider/apis', {
        name: `Quokka ${slug}`,
        slug,
        summary: 'Counts quokkas on islands, a zoological census service',
        base_url: 'http://127.0.0.1:9/v1',
        endpoints: prices.map((price_cents, i) => ({ method: 'GET', path: `/census${i}`, price_cents })),
      });
      expect(created.status, show(created)).toBe(201);
      const published = await providerApi('POST', `/v1/provider/apis/${created.body.data.api_id}/publish`, {
        accept_terms: true,
        skip_verify: true,
      });
      expect(published.status, show(published)).toBe(200);
    };
    await publish('quokka-mixed', [0, 4]);
    await publish('quokka-free', [0, 0]);
    // Search answers from a per-process copy refreshed at most every 0.4 s: wait for it to hold both publishes rather
    // than hope the refresh falls after them. Only provider listings: the assertion is about these two listings' price,
    // not about how they rank against the census APIs of the 1,706 directory listings.
    await s.services.search.sync(true);
    const found = await get('/v1/search?q=quokka%20census&source=provider&limit=10');
    const bySlug = new Map((found.body.data as { slug: string; price: unknown }[]).map((i) => [i.slug, i.price]));
    expect(bySlug.get('quokka-mixed'), show(found)).toEqual({ min_price_cents: 0, max_price_cents: 4, free: false });
    expect(bySlug.get('quokka-free')).toEqual({ min_price_cents: 0, max_price_cents: 0, free: true });
    for (const slug of ['quokka-mixed', 'quokka-free']) {
      const detail = await get(`/v1/apis/${slug}`);
      expect(detail.body.data.pricing.free, show(detail)).toBe(slug === 'quokka-free');
    }
  });

  it('the gateway answers 404 not_found for a directory listing: listed, not callable until claimed', async () => {
    const res = await http(gatewayServer.url, 'GET', '/v1/proxy/open-meteo/v1/forecast', { token: consumer.apiKey });
    expectFailure(res, 404, 'not_found');
    expect(res.body.error.message).toMatch(
      /listed from a public directory and is not callable until its provider claims it/,
    );
  });

  it('says what is callable: callable=true keeps provider listings, a directory entry says how it becomes one (issue 22)', async () => {
    const callable = await get('/v1/search?q=quokka%20census&callable=true&limit=50');
    expect(callable.status, show(callable)).toBe(200);
    const items = callable.body.data as { slug: string; source: string; callable: boolean }[];
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((i) => i.callable && i.source === 'provider')).toBe(true);
    const directory = await get('/v1/search?q=weather&callable=false&limit=20');
    const entries = directory.body.data as { source: string; callable: boolean }[];
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.every((i) => !i.callable && i.source === 'directory')).toBe(true);
    // A contradiction is an empty answer, not an error; a bad value is a 400.
    expect((await get('/v1/search?q=weather&callable=true&source=directory')).body.data).toEqual([]);
    expectFailure(await get('/v1/search?callable=maybe'), 400, 'validation_failed');

    const entry = (await get('/v1/apis/open-meteo')).body.data;
    expect(entry).toMatchObject({ source: 'directory', callable: false, gateway_url: null });
    expect(entry.directory_entry.note).toContain('not callable through the gateway');
    expect(entry.directory_entry.how_to_list).toContain('POST /v1/provider/apis');
    const listed = (await get('/v1/apis/quokka-mixed')).body.data;
    expect(listed.callable).toBe(true);
    expect(listed.gateway_url).toMatch(/\/v1\/proxy\/quokka-mixed$/);
  });
});
