// The demo's sample APIs (core/demo/, issue 31 item 7): their answers, their OpenAPI descriptions as the ordinary
// import reads them (every endpoint with its schemas, every simple GET answering the smoke test with its defaults),
// and the demo upstream's HTTP handling in front of the control plane.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_APIS } from '../../core/demo/demo-apis.js';
import { demoOpenApi } from '../../core/demo/demo-openapi.js';
import {
  DEMO_UPSTREAM_PREFIX,
  demoBaseUrl,
  demoNamedUpstream,
  withDemoUpstream,
} from '../../core/demo/demo-upstream.js';
import { status } from '../../core/demo/http-statuses.js';
import { analyze, wordCount } from '../../core/demo/text-stats.js';
import { convert } from '../../core/demo/units.js';
import { country, countries, currencies, timeIn } from '../../core/demo/world-data.js';
import { parseOpenApiDocument } from '../../core/providers/openapi-import.js';

describe('the sample APIs', () => {
  it('convert units, temperatures included, and refuse across dimensions', () => {
    expect(convert(5, 'km', 'mi')).toMatchObject({ ok: true, result: 3.106855961, dimension: 'length' });
    expect(convert(100, 'C', 'f')).toMatchObject({ ok: true, result: 212 });
    expect(convert(1, 'gib', 'mb')).toMatchObject({ ok: true, result: 1073.741824 });
    expect(convert(1, 'km', 'kg')).toEqual({ ok: false, message: 'Cannot convert length (km) to mass (kg).' });
    expect(convert(1, 'parsec', 'km')).toMatchObject({ ok: false, message: expect.stringContaining('GET /units') });
  });

  it('count words and sentences by Unicode segmentation', () => {
    expect(wordCount('Hello, wide world!')).toEqual({ words: 3, characters: 18 });
    const stats = analyze('The cat sat. The cat ran!\n\nA dog barked at the cat.', 2);
    expect(stats).toMatchObject({ words: 12, sentences: 3, paragraphs: 2, unique_words: 8, longest_word: 'barked' });
    expect(stats.top_words).toEqual([
      { word: 'cat', count: 3 },
      { word: 'barked', count: 1 },
    ]);
    expect(wordCount('東京は晴れ')).toMatchObject({ characters: 5 });
  });

  it('look up countries, currencies and time zones in the CLDR and IANA data bundled with Node', () => {
    expect(country('jp', 'fr')).toMatchObject({ code: 'JP', name: 'Japon', flag: '🇯🇵', names: { en: 'Japan' } });
    expect(country('ZZ', 'en')).toBeUndefined();
    expect(countries('en').length).toBeGreaterThan(240);
    expect(currencies('en').find((c) => c.code === 'EUR')).toEqual({ code: 'EUR', name: 'Euro', symbol: '€' });
    const tokyo = timeIn('Asia/Tokyo', new Date('2026-01-02T03:04:05Z'))!;
    expect(tokyo).toEqual({
      zone: 'Asia/Tokyo',
      local_time: '2026-01-02T12:04:05+09:00',
      utc_offset: '+09:00',
      weekday: 'Friday',
      utc_time: '2026-01-02T03:04:05Z',
    });
    expect(timeIn('UTC', new Date('2026-01-02T03:04:05Z'))!.utc_offset).toBe('+00:00');
    expect(timeIn('Mars/Olympus', new Date())).toBeUndefined();
  });

  it('explain HTTP status codes', () => {
    expect(status('429')).toMatchObject({ code: 429, reason: 'Too Many Requests', retryable: true });
    expect(status('404')).toMatchObject({ class: 'client error', retryable: false });
    expect(status('999')).toBeUndefined();
    expect(status('4x4')).toBeUndefined();
  });

  it.each(DEMO_APIS.map((a) => [a.slug, a] as const))(
    '%s: its OpenAPI description imports to exactly its endpoints, with schemas; a free endpoint',
    async (_slug, api) => {
      const imported = await parseOpenApiDocument(JSON.stringify(demoOpenApi(api, '/x')));
      expect(imported.endpoints.map((e) => `${e.method} ${e.path}`).sort()).toEqual(
        api.endpoints.map((e) => `${e.method} ${e.path}`).sort(),
      );
      for (const e of imported.endpoints) expect(e.output_schema, `${e.method} ${e.path}`).not.toBeNull();
      expect(api.endpoints.some((e) => e.priceCents === 0)).toBe(true);
      // The smoke test calls each GET without path parameters and nothing else: each answers 200 on its defaults.
      for (const e of api.endpoints.filter((x) => x.method === 'GET' && !x.path.includes('{'))) {
        const answer = e.handle({ query: new URLSearchParams(), params: {}, body: undefined, now: new Date() });
        expect(answer.status, `${api.slug} ${e.path}`).toBe(200);
      }
    },
  );
});

describe('the demo upstream', () => {
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    const fallback = (_req: IncomingMessage, res: ServerResponse) => res.writeHead(418).end('control plane');
    server = http.createServer(withDemoUpstream(fallback));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is the named upstream only while the demo is on, at the control plane port on loopback', () => {
    const config = { ports: { api: 3000, gateway: 3001, mcp: 3002 }, demoCatalog: true };
    expect(demoNamedUpstream(config)).toEqual({ origin: 'http://127.0.0.1:3000', pathPrefix: DEMO_UPSTREAM_PREFIX });
    expect(demoNamedUpstream({ ...config, demoCatalog: false })).toBeUndefined();
    expect(demoBaseUrl(config, DEMO_APIS[0]!)).toBe('http://127.0.0.1:3000/demo-upstream/unit-converter');
  });

  it('answers its APIs, their OpenAPI documents, and clear errors; other paths reach the control plane', async () => {
    const get = (path: string, init?: RequestInit) => fetch(`${base}${path}`, init);
    const converted = await get('/demo-upstream/unit-converter/convert?value=1&from=c&to=f');
    expect(await converted.json()).toEqual({ value: 1, from: 'c', to: 'f', dimension: 'temperature', result: 33.8 });
    const country = await get('/demo-upstream/world-data/countries/fr?lang=de');
    expect(await country.json()).toMatchObject({ code: 'FR', name: 'Frankreich' });
    const doc = (await (await get('/demo-upstream/text-stats/openapi.json')).json()) as { paths: object };
    expect(Object.keys(doc.paths)).toEqual(['/word-count', '/analyze']);
    const analyzed = await get('/demo-upstream/text-stats/analyze', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'One two. Three.' }),
    });
    expect(await analyzed.json()).toMatchObject({ words: 3, sentences: 2 });

    expect((await get('/demo-upstream/nothing/x')).status).toBe(404);
    expect((await get('/demo-upstream/world-data/countries/XX')).status).toBe(404);
    const wrong = await get('/demo-upstream/text-stats/analyze');
    expect([wrong.status, wrong.headers.get('allow')]).toEqual([405, 'POST']);
    const notJson = await get('/demo-upstream/text-stats/analyze', { method: 'POST', body: '{nope' });
    expect(notJson.status).toBe(400);
    const huge = await get('/demo-upstream/text-stats/analyze', { method: 'POST', body: 'x'.repeat(300_000) });
    expect(huge.status).toBe(413);
    const other = await get('/v1/health');
    expect([other.status, await other.text()]).toEqual([418, 'control plane']);
  });
});
