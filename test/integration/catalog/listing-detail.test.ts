// Listing detail and its sub-resources over HTTP (issue 11 item 4), and the provider's catalog fields (item 2):
// category, tags, examples and docs_url set at create and by PATCH, the taxonomy's live counts, the detail with merit
// scores (neutral until the rollup has a row), endpoints, schema, the OpenAPI 3.0 export of an imported 3.1 document
// (it parses with swagger-parser and its server is the gateway), stats (computed, then from the rollup), score
// history and ranks; a directory listing answers empty sub-resources; bad input is 400 and unknown slugs 404.
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { newId } from '../../../core/ids.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, serve, describe as show } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import type { Upstream } from '../../helpers/upstream.js';
import { startOpenApiUpstream } from '../../helpers/openapi-upstream.js';
import { closeAll } from '../../helpers/fixtures.js';

describe('listing detail and sub-resources', () => {
  let stack: TestStack;
  let server: RunningHttpServer;
  let base: string;
  let upstream: Upstream;
  let provider: Person;
  let consumer: Person;
  let apiId: string;

  beforeAll(async () => {
    upstream = await startOpenApiUpstream((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{}');
    });
    stack = await createTestStack();
    server = await serve(createApiApp(stack.services).callback());
    base = server.url;
    provider = await createPerson(stack.services);
    consumer = await createPerson(stack.services);
    await sql(stack.db.url, "insert into profiles (org_id, slug, display_name) values ($1, 'sky-co', 'Sky Co')", [
      provider.orgId,
    ]);
  });
  afterAll(async () => {
    await closeAll(server, stack, upstream);
  });

  const asProvider = (method: string, p: string, body?: unknown) =>
    http(base, method, p, { token: provider.session, body });
  const publish = (id: string) =>
    sql(stack.db.url, "update apis set status = 'live', published_at = now() where id = $1", [id]);

  describe('provider fields', () => {
    it('sets category, tags, examples and docs_url at create; they show in the own view', async () => {
      const res = await asProvider('POST', '/v1/provider/apis', {
        name: 'Weather',
        slug: 'weather-detail',
        summary: 'Forecasts and alerts',
        base_url: `${upstream.url}/v2`,
        category: 'weather',
        tags: ['Forecast', 'forecast', ' ALERTS '],
        examples: ['Will it rain in Paris tomorrow?', 'Will it rain in Paris tomorrow?', 'Storm warnings near me'],
        docs_url: 'https://weather.example/docs',
        import_from: { type: 'openapi_url', url: `${upstream.url}/openapi.json` },
      });
      expect(res.status, show(res)).toBe(201);
      apiId = res.body.data.api_id;
      expect(res.body.data).toMatchObject({
        category: 'weather',
        tags: ['forecast', 'alerts'],
        examples: ['Will it rain in Paris tomorrow?', 'Storm warnings near me'],
        docs_url: 'https://weather.example/docs',
        source: 'provider',
      });
      const own = await asProvider('GET', `/v1/provider/apis/${apiId}`);
      expect(own.body.data, show(own)).toMatchObject({ category: 'weather', tags: ['forecast', 'alerts'] });
    });

    it('PATCH changes them; null clears category and docs_url', async () => {
      const res = await asProvider('PATCH', `/v1/provider/apis/${apiId}`, {
        category: 'environment',
        tags: ['storms'],
        examples: ['How hot will it be in Rome on Friday?'],
      });
      expect(res.status, show(res)).toBe(200);
      expect(res.body.data).toMatchObject({
        category: 'environment',
        tags: ['storms'],
        examples: ['How hot will it be in Rome on Friday?'],
      });
      const cleared = await asProvider('PATCH', `/v1/provider/apis/${apiId}`, { category: null, docs_url: null });
      expect(cleared.body.data, show(cleared)).toMatchObject({ category: null, docs_url: null });
      const back = await asProvider('PATCH', `/v1/provider/apis/${apiId}`, {
        category: 'weather',
        docs_url: 'https://weather.example/docs',
        tags: ['forecast', 'alerts'],
      });
      expect(back.status, show(back)).toBe(200);
    });

    it('refuses an unknown category (saying where the valid ones are) and oversized tags or examples', async () => {
      const unknown = await asProvider('PATCH', `/v1/provider/apis/${apiId}`, { category: 'no-such-category' });
      expectFailure(unknown, 400, 'validation_failed');
      expect(unknown.body.error.message).toContain('GET /v1/categories');
      const create = await asProvider('POST', '/v1/provider/apis', {
        name: 'X',
        slug: 'x-unknown-category',
        summary: 'x',
        base_url: upstream.url,
        category: 'nope',
      });
      expectFailure(create, 400, 'validation_failed');
      const bad: unknown[] = [
        { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
        { tags: ['x'.repeat(41)] },
        { tags: [''] },
        { examples: Array.from({ length: 21 }, (_, i) => `question ${i}?`) },
        { examples: ['x'.repeat(301)] },
        { examples: 'not a list' },
        { category: 'Bad Slug!' },
      ];
      for (const body of bad) {
        expectFailure(await asProvider('PATCH', `/v1/provider/apis/${apiId}`, body), 400, 'validation_failed');
      }
      const [row] = await sql(stack.db.url, 'select category, tags, examples from apis where id = $1', [apiId]);
      expect(row).toEqual({
        category: 'weather',
        tags: ['forecast', 'alerts'],
        examples: ['How hot will it be in Rome on Friday?'],
      });
    });
  });

  describe('categories', () => {
    it('lists the taxonomy with live listing counts (drafts do not count)', async () => {
      const before = await http(base, 'GET', '/v1/categories');
      expect(before.status, show(before)).toBe(200);
      expect(before.body.data).toHaveLength(52);
      const weather = () =>
        before.body.data.find((c: { slug: string }) => c.slug === 'weather') as { api_count: number; name: string };
      expect(weather()).toEqual({ slug: 'weather', name: 'Weather', api_count: 0 });
      await publish(apiId);
      const after = await http(base, 'GET', '/v1/categories');
      expect(after.body.data.find((c: { slug: string }) => c.slug === 'weather')).toEqual({
        slug: 'weather',
        name: 'Weather',
        api_count: 1,
      });
      expect(after.body.data.reduce((n: number, c: { api_count: number }) => n + c.api_count, 0)).toBe(1);
    });
  });

  describe('detail', () => {
    it('has status, category, tags, source, docs_url, examples, neutral merit, pricing per endpoint, provider, terms', async () => {
      await sql(
        stack.db.url,
        `update endpoints set price_cents = 5, pending_price_cents = 8, pending_price_effective_at = now() + interval '7 days',
                discount = '{"percent": 20, "label": "launch"}'
          where api_id = $1 and method = 'GET' and path = '/forecast/{city}'`,
        [apiId],
      );
      const res = await http(base, 'GET', '/v1/apis/weather-detail');
      expect(res.status, show(res)).toBe(200);
      const d = res.body.data;
      expect(d).toMatchObject({
        slug: 'weather-detail',
        status: 'live',
        source: 'provider',
        category: { slug: 'weather', name: 'Weather' },
        tags: ['forecast', 'alerts'],
        examples: ['How hot will it be in Rome on Friday?'],
        docs_url: 'https://weather.example/docs',
        provider: { slug: 'sky-co', name: 'Sky Co' },
        svc_score: 50,
        merit: {
          reliability: 0.5,
          latency: 0.5,
          usage: 0.5,
          value: 0.5,
          freshness: 0.5,
          rated: false,
          updated_at: null,
        },
        pricing: { endpoints: 6, free_endpoints: 5, min_price_cents: 0, max_price_cents: 4, free: false },
        terms: { required: false, documents: [] },
      });
      const forecast = d.endpoints.find((e: { path: string }) => e.path === '/forecast/{city}');
      expect(forecast).toMatchObject({
        method: 'GET',
        price_cents: 5,
        price_cents_effective: 4,
        free: false,
        price_increase: { price_cents: 8, effective_at: expect.any(String) },
        discount: { percent: 20, label: 'launch', off_cents: 1 },
      });
      expect(forecast.input_schema).toBeUndefined(); // schemas live at /schema
    });

    it('reads merit scores from the rollup row when there is one (clamped to their ranges)', async () => {
      await sql(
        stack.db.url,
        `insert into api_scores (api_id, svc_score, reliability, latency, usage, value, freshness, updated_at)
         values ($1, 87, 0.99, 0.8, 0.25, 1.7, -0.2, '2026-11-20T10:00:00Z')`,
        [apiId],
      );
      const res = await http(base, 'GET', '/v1/apis/weather-detail');
      expect(res.body.data.svc_score, show(res)).toBe(87);
      expect(res.body.data.merit).toEqual({
        reliability: 0.99,
        latency: 0.8,
        usage: 0.25,
        value: 1,
        freshness: 0,
        rated: true,
        updated_at: '2026-11-20T10:00:00.000Z',
      });
    });
  });

  describe('endpoints, schema, openapi', () => {
    it('endpoints: one row per endpoint with prices, increase and discount', async () => {
      const res = await http(base, 'GET', '/v1/apis/weather-detail/endpoints');
      expect(res.status, show(res)).toBe(200);
      expect(res.body.data).toHaveLength(6);
      for (const row of res.body.data) {
        expect(Object.keys(row).sort()).toEqual(
          [
            'discount',
            'endpoint_id',
            'free',
            'method',
            'path',
            'price_cents',
            'price_cents_effective',
            'price_increase',
            'removal',
            'summary',
          ].sort(),
        );
      }
      expect(res.body.data.find((e: { path: string }) => e.path === '/forecast/{city}')).toMatchObject({
        price_cents: 5,
        price_cents_effective: 4,
        price_increase: { price_cents: 8 },
      });
    });

    it('schema: input and output schemas and the gateway URL of each endpoint', async () => {
      const res = await http(base, 'GET', '/v1/apis/weather-detail/schema');
      expect(res.status, show(res)).toBe(200);
      const gw = `${stack.config.urls.gateway}/v1/proxy/weather-detail`;
      expect(res.body.data.gateway_url).toBe(gw);
      const forecast = res.body.data.endpoints.find((e: { path: string }) => e.path === '/forecast/{city}');
      expect(forecast).toMatchObject({
        method: 'GET',
        gateway_url: `${gw}/forecast/{city}`,
        input_schema: { type: 'object', properties: { path: { properties: { city: { type: 'string' } } } } },
        output_schema: expect.any(Object),
      });
    });

    it('openapi: a raw OpenAPI 3.0 document (no envelope) that swagger-parser validates; paths are the gateway’s', async () => {
      const res = await http(base, 'GET', '/v1/apis/weather-detail/openapi');
      expect(res.status, show(res)).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const doc = res.body;
      expect(doc.ok).toBeUndefined();
      expect(doc.openapi).toBe('3.0.3');
      expect(doc.servers).toEqual([
        { url: `${stack.config.urls.gateway}/v1/proxy/weather-detail`, description: expect.any(String) },
      ]);
      expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(doc.security).toEqual([{ bearerAuth: [] }]);
      const endpoints = (await http(base, 'GET', '/v1/apis/weather-detail/endpoints')).body.data as {
        method: string;
        path: string;
      }[];
      const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, item]) =>
        Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`),
      );
      expect(ops.sort()).toEqual(endpoints.map((e) => `${e.method} ${e.path}`).sort());
      const validated = (await SwaggerParser.validate(structuredClone(doc))) as { openapi: string };
      expect(validated.openapi).toBe('3.0.3');
      // Each path, appended to the server URL, is the gateway route of that endpoint.
      for (const p of Object.keys(doc.paths)) {
        expect(`${doc.servers[0].url}${p}`).toBe(`${stack.config.urls.gateway}/v1/proxy/weather-detail${p}`);
      }
      expect(JSON.stringify(doc)).not.toContain(upstream.url); // the upstream stays private
      const forecast = doc.paths['/forecast/{city}'].get;
      expect(forecast.parameters).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'city', in: 'path', required: true })]),
      );
    });
  });

  describe('stats, history, ranks', () => {
    async function usage(
      orgId: string,
      keyId: string,
      outcome: 'success' | 'failed',
      status: number,
      cost: number,
      latency: number,
      ago = '1 hour',
    ) {
      await sql(
        stack.db.url,
        `insert into usage_events (id, org_id, key_id, api_slug, api_id, method, path, status, outcome, cost_cents,
                                   price_cents_effective, latency_ms, request_id, created_at)
         values ($1, $2, $3, 'weather-detail', $4, 'GET', '/alerts', $5, $6, $7, $7, $8, $1, now() - $9::interval)`,
        [newId('usage'), orgId, keyId, apiId, status, outcome, cost, latency, ago],
      );
    }

    it('computes stats from usage events when the rollup has no row', async () => {
      const other = await createPerson(stack.services);
      await usage(consumer.orgId, consumer.keyId, 'success', 200, 5, 10);
      await usage(consumer.orgId, consumer.keyId, 'success', 200, 5, 20);
      await usage(other.orgId, other.keyId, 'success', 200, 0, 30);
      await usage(other.orgId, other.keyId, 'failed', 503, 0, 40);
      await usage(other.orgId, other.keyId, 'failed', 429, 0, 50);
      await usage(other.orgId, other.keyId, 'failed', 0, 0, 9000);
      await usage(consumer.orgId, consumer.keyId, 'success', 200, 7, 15, '3 days'); // outside 24h, inside 7d

      const day = await http(base, 'GET', '/v1/apis/weather-detail/stats');
      expect(day.status, show(day)).toBe(200);
      expect(day.body.data).toMatchObject({
        window: '24h',
        calls: 6,
        successes: 3,
        success_rate: 0.5,
        latency_ms: { p50: 30, p95: 9000 },
        gmv_cents: 10,
        unique_consumers: 2,
        errors: { upstream_5xx: 1, upstream_rate_limited: 1, no_response: 1 },
        source: 'live',
      });
      const week = await http(base, 'GET', '/v1/apis/weather-detail/stats?window=7d');
      expect(week.body.data, show(week)).toMatchObject({ window: '7d', calls: 7, successes: 4, gmv_cents: 17 });
    });

    it('reads the rollup row when there is one', async () => {
      await sql(
        stack.db.url,
        `insert into api_stats (api_id, "window", calls, successes, p50_ms, p95_ms, gmv_cents, unique_consumers, errors, updated_at)
         values ($1, '30d', 1000, 990, 42, 180, 4950, 17, '{"upstream_5xx": 10}', '2026-11-23T12:00:00Z')`,
        [apiId],
      );
      const res = await http(base, 'GET', '/v1/apis/weather-detail/stats?window=30d');
      expect(res.body.data, show(res)).toMatchObject({
        window: '30d',
        calls: 1000,
        successes: 990,
        success_rate: 0.99,
        latency_ms: { p50: 42, p95: 180 },
        gmv_cents: 4950,
        unique_consumers: 17,
        errors: { upstream_5xx: 10 },
        source: 'rollup',
        updated_at: '2026-11-23T12:00:00.000Z',
      });
    });

    it('history: empty, then the latest daily points oldest first, bounded by limit', async () => {
      const empty = await http(base, 'GET', '/v1/apis/weather-detail/history');
      expect(empty.body.data, show(empty)).toEqual([]);
      for (const [day, score] of [
        ['2026-11-20', 60],
        ['2026-11-21', 65],
        ['2026-11-22', 70],
      ] as const) {
        await sql(
          stack.db.url,
          `insert into api_score_history (api_id, day, svc_score, reliability, latency, usage, value, freshness)
           values ($1, $2, $3, 0.9, 0.8, 0.5, 0.75, 1)`,
          [apiId, day, score],
        );
      }
      const res = await http(base, 'GET', '/v1/apis/weather-detail/history?limit=2');
      expect(res.body.data, show(res)).toEqual([
        { day: '2026-11-21', svc_score: 65, reliability: 0.9, latency: 0.8, usage: 0.5, value: 0.75, freshness: 1 },
        { day: '2026-11-22', svc_score: 70, reliability: 0.9, latency: 0.8, usage: 0.5, value: 0.75, freshness: 1 },
      ]);
      expect((await http(base, 'GET', '/v1/apis/weather-detail/history')).body.data).toHaveLength(3);
    });

    it('ranks: every board overall and in the category, rank null until ranked, with each board size', async () => {
      const boards = ['top_grossing', 'most_used', 'most_reliable', 'best_value', 'trending', 'new_rising'];
      const unranked = (await http(base, 'GET', '/v1/apis/weather-detail/ranks')).body.data;
      expect(unranked).toEqual(
        boards.flatMap((board) => [
          { board, scope: 'overall', category: null, rank: null, board_size: 0, metric: null, updated_at: null },
          { board, scope: 'category', category: 'weather', rank: null, board_size: 0, metric: null, updated_at: null },
        ]),
      );
      await sql(
        stack.db.url,
        `insert into api_ranks (api_id, board, scope, rank, metric, updated_at) values
           ($1, 'most_used', 'category:weather', 1, 990, '2026-11-23T12:00:00Z'),
           ($1, 'most_used', 'overall', 12, 990, '2026-11-23T12:00:00Z'),
           ($1, 'top_grossing', 'overall', 30, 4950, '2026-11-23T12:00:00Z'),
           ('api_other', 'most_used', 'overall', 1, 5000, '2026-11-23T12:00:00Z')`,
        [apiId],
      );
      const res = await http(base, 'GET', '/v1/apis/weather-detail/ranks');
      const data = res.body.data as { board: string; scope: string; rank: number | null }[];
      expect(data, show(res)).toHaveLength(12);
      expect(data.map((r) => `${r.board}/${r.scope}`)).toEqual(
        boards.flatMap((b) => [`${b}/overall`, `${b}/category`]),
      );
      expect(data.find((r) => r.board === 'most_used' && r.scope === 'overall')).toEqual({
        board: 'most_used',
        scope: 'overall',
        category: null,
        rank: 12,
        board_size: 2,
        metric: 990,
        updated_at: '2026-11-23T12:00:00.000Z',
      });
      expect(data.find((r) => r.board === 'most_used' && r.scope === 'category')).toMatchObject({
        category: 'weather',
        rank: 1,
        board_size: 1,
      });
      expect(data.find((r) => r.board === 'top_grossing' && r.scope === 'overall')).toMatchObject({
        rank: 30,
        board_size: 1,
        metric: 4950,
      });
      expect(data.filter((r) => r.rank === null)).toHaveLength(9);
    });
  });

  describe('directory listings, errors', () => {
    it('a directory listing (no endpoints) answers empty sub-resources and an OpenAPI document without paths', async () => {
      await sql(
        stack.db.url,
        `insert into apis (id, org_id, name, slug, summary, base_url, status, source, category, docs_url, published_at)
         values ($1, $2, 'Cat Facts', 'cat-facts-dir', 'Daily cat facts', 'https://catfact.example', 'live',
                 'directory', 'animals', 'https://catfact.example/docs', now())`,
        [newId('api'), provider.orgId],
      );
      const detail = await http(base, 'GET', '/v1/apis/cat-facts-dir');
      expect(detail.body.data, show(detail)).toMatchObject({
        source: 'directory',
        category: { slug: 'animals', name: 'Animals' },
        endpoints: [],
        pricing: { endpoints: 0, free: false },
        svc_score: 50,
      });
      expect((await http(base, 'GET', '/v1/apis/cat-facts-dir/endpoints')).body.data).toEqual([]);
      expect((await http(base, 'GET', '/v1/apis/cat-facts-dir/schema')).body.data.endpoints).toEqual([]);
      expect((await http(base, 'GET', '/v1/apis/cat-facts-dir/history')).body.data).toEqual([]);
      const dirRanks = (await http(base, 'GET', '/v1/apis/cat-facts-dir/ranks')).body.data as { rank: number | null }[];
      expect(dirRanks.map((r) => r.rank)).toEqual(Array(12).fill(null));
      expect((await http(base, 'GET', '/v1/apis/cat-facts-dir/stats')).body.data).toMatchObject({ calls: 0 });
      const doc = (await http(base, 'GET', '/v1/apis/cat-facts-dir/openapi')).body;
      expect(doc.paths).toEqual({});
      await SwaggerParser.validate(structuredClone(doc));
    });

    it('unknown or draft slug → 404 on every sub-resource; bad window or limit → 400', async () => {
      await sql(
        stack.db.url,
        "insert into apis (id, org_id, name, slug, summary, base_url) values ($1, $2, 'D', 'draft-one', 'd', 'https://d.example')",
        [newId('api'), provider.orgId],
      );
      for (const slug of ['no-such-api', 'draft-one']) {
        for (const tail of ['', '/endpoints', '/schema', '/openapi', '/stats', '/history', '/ranks']) {
          const res = await http(base, 'GET', `/v1/apis/${slug}${tail}`);
          expectFailure(res, 404, 'not_found');
        }
      }
      for (const q of ['window=1h', 'window=', 'window=24h&window=7d', 'other=1']) {
        expectFailure(await http(base, 'GET', `/v1/apis/weather-detail/stats?${q}`), 400, 'validation_failed');
      }
      for (const q of ['limit=0', 'limit=366', 'limit=abc', 'limit=1.5', 'limit=-1']) {
        expectFailure(await http(base, 'GET', `/v1/apis/weather-detail/history?${q}`), 400, 'validation_failed');
      }
    });
  });
});
