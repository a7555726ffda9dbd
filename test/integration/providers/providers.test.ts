// The provider lifecycle over real Temporal, Postgres and a loopback upstream: import an OpenAPI 3.1 document, set a
// bearer credential, price endpoints (one free), verify (the upstream sees the credential), publish (the listing is
// live), unpublish (gone); each step a workflow run under the business id publish:{apiId}.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../helpers/db.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { expectFailure, http, describe as show } from '../../helpers/http.js';
import { startFullStack, type FullStack } from '../../helpers/full-stack.js';
import type { Upstream } from '../../helpers/upstream.js';
import { startOpenApiUpstream } from '../../helpers/openapi-upstream.js';

describe('provider lifecycle', () => {
  let s: FullStack;
  let upstream: Upstream;
  let provider: Person;
  let stranger: Person;
  let healthy = true;

  beforeAll(async () => {
    upstream = await startOpenApiUpstream((req, res) => {
      const url = req.url ?? '/';
      if (req.method === 'GET' && (url.startsWith('/v2/health') || url.startsWith('/v2/alerts'))) {
        res.writeHead(healthy ? 200 : 500, { 'content-type': 'application/json' });
        res.end(healthy ? '{"status":"ok"}' : '{"status":"down"}');
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    s = await startFullStack({ env: { UPSTREAM_ALLOW_PRIVATE: 'true' } });
    provider = await createPerson(s.services);
    stranger = await createPerson(s.services);
  });
  afterAll(async () => {
    // Every money test file ends with the books consistent (each org's cached balance = its ledger sum).
    expect(await s.services.ledger.findDrift()).toEqual([]);
    await s?.close();
    await upstream?.close();
  });

  const api = (method: string, p: string, body?: unknown, token = provider.session) =>
    http(s.base, method, p, { token, body });

  async function importWeather(slug: string) {
    const res = await api('POST', '/v1/provider/apis', {
      name: 'Weather',
      slug,
      summary: 'Forecasts and alerts',
      base_url: `${upstream.url}/v2`,
      tags: ['weather'],
      import_from: { type: 'openapi_url', url: `${upstream.url}/openapi.json` },
    });
    expect(res.status, show(res)).toBe(201);
    return res.body.data;
  }

  it('imports, prices, verifies with the credential, publishes and unpublishes', async () => {
    const created = await importWeather('weather');
    expect(created).toMatchObject({
      slug: 'weather',
      status: 'draft',
      import_source: { type: 'openapi_url', openapi_version: '3.1.0', operations: 6 },
    });
    const byRoute = Object.fromEntries(
      created.endpoints.map((e: { method: string; path: string; endpoint_id: string }) => [`${e.method} ${e.path}`, e]),
    );
    expect(Object.keys(byRoute).sort()).toEqual([
      'DELETE /alerts/{alertId}',
      'GET /alerts',
      'GET /forecast/{city}',
      'GET /health',
      'PATCH /alerts/{alertId}',
      'POST /alerts',
    ]);
    expect(byRoute['GET /forecast/{city}'].input_schema.properties.path.required).toEqual(['city']);

    const cred = await api('PUT', `/v1/provider/apis/${created.api_id}/credentials`, {
      secret: 'up-secret-123',
      injection: 'bearer',
    });
    expect(cred.body.data).toEqual({
      set: true,
      injection: 'bearer',
      injection_name: null,
      updated_at: expect.any(String),
    });
    const detail = await api('GET', `/v1/provider/apis/${created.api_id}`);
    expect(detail.text).not.toContain('up-secret-123');
    const [stored] = await sql<{ credential_ciphertext: string }>(
      s.db.url,
      'select credential_ciphertext from apis where id = $1',
      [created.api_id],
    );
    expect(stored!.credential_ciphertext).toMatch(/^v2\.[0-9a-f]{8}\./);
    expect(stored!.credential_ciphertext).not.toContain('up-secret-123');

    const forecast = byRoute['GET /forecast/{city}'].endpoint_id;
    const health = byRoute['GET /health'].endpoint_id;
    const priced = await api('PATCH', `/v1/provider/apis/${created.api_id}/pricing`, {
      endpoints: [
        { endpoint_id: forecast, price_cents: 5 },
        { endpoint_id: health, price_cents: 0 },
      ],
    });
    expect(priced.status, show(priced)).toBe(200);
    expect(priced.body.data.endpoints.map((e: { price_cents: number }) => e.price_cents)).toEqual([5, 0]);

    const seenBefore = upstream.seen.length;
    const verified = await api('POST', `/v1/provider/apis/${created.api_id}/verify`);
    expect(verified.status, show(verified)).toBe(200);
    expect(verified.body.data).toMatchObject({ action: 'verify', status: 'draft', verification: { passed: true } });
    expect(verified.body.data.verification.checks.map((c: { path: string }) => c.path).sort()).toEqual([
      '/alerts',
      '/health',
    ]);
    const calls = upstream.seen.slice(seenBefore);
    expect(calls.map((c) => c.url).sort()).toEqual(['/v2/alerts', '/v2/health']);
    for (const c of calls) expect(c.headers.authorization).toBe('Bearer up-secret-123');

    expectFailure(await http(s.base, 'GET', '/v1/apis/weather'), 404, 'not_found');
    const noTerms = await api('POST', `/v1/provider/apis/${created.api_id}/publish`, {});
    expectFailure(noTerms, 400, 'validation_failed');

    const published = await api('POST', `/v1/provider/apis/${created.api_id}/publish`, { acceptTerms: true });
    expect(published.status, show(published)).toBe(200);
    expect(published.body.data).toMatchObject({ action: 'publish', status: 'live', verification: { passed: true } });

    const listing = await http(s.base, 'GET', '/v1/apis/weather');
    expect(listing.status, show(listing)).toBe(200);
    expect(listing.body.data).toMatchObject({
      slug: 'weather',
      name: 'Weather',
      pricing: { endpoints: 6, free_endpoints: 5, min_price_cents: 0, max_price_cents: 5 },
      verification: { status: 'passed' },
      gateway_url: expect.stringMatching(/\/v1\/proxy\/weather$/),
    });
    expect(listing.text).not.toContain(upstream.url); // the upstream stays private
    expect(listing.text).not.toContain('up-secret-123');

    const unpublished = await api('POST', `/v1/provider/apis/${created.api_id}/unpublish`);
    expect(unpublished.body.data).toMatchObject({ action: 'unpublish', status: 'draft' });
    expectFailure(await http(s.base, 'GET', '/v1/apis/weather'), 404, 'not_found');

    // Operators see each step as a run of the business id in the Temporal UI.
    const runs: { status: string; type: string }[] = [];
    for await (const wf of s.temporal.client.workflow.list({ query: `WorkflowId = "publish:${created.api_id}"` })) {
      runs.push({ status: wf.status.name, type: wf.type });
    }
    expect(runs).toHaveLength(3);
    expect(runs.every((r) => r.status === 'COMPLETED' && r.type === 'verifyAndPublishWorkflow')).toBe(true);
  });

  it('every provider gets a public name and slug with its first API: unique, never reserved, set ones kept (issue 22)', async () => {
    const create = (who: Person, name: string, slug: string) =>
      api(
        'POST',
        '/v1/provider/apis',
        {
          name,
          slug,
          summary: 's',
          base_url: `${upstream.url}/v2`,
          endpoints: [{ method: 'GET', path: '/v2/health' }],
        },
        who.session,
      );
    const profileOf = async (who: Person) =>
      (await api('GET', '/v1/me/profile', undefined, who.session)).body.data as { display_name: string; slug: string };

    const first = await createPerson(s.services);
    expect((await profileOf(first)).slug).toBeNull();
    expect((await create(first, 'Tide Tables', 'tide-tables-a')).status).toBe(201);
    expect(await profileOf(first)).toMatchObject({ display_name: 'Tide Tables', slug: 'tide-tables' });
    // A second API keeps the identity; a second provider with the same name gets the next slug.
    expect((await create(first, 'Other', 'tide-other-a')).status).toBe(201);
    expect(await profileOf(first)).toMatchObject({ display_name: 'Tide Tables', slug: 'tide-tables' });
    const second = await createPerson(s.services);
    expect((await create(second, 'Tide Tables', 'tide-tables-b')).status).toBe(201);
    expect((await profileOf(second)).slug).toBe('tide-tables-2');
    // A platform word is never a provider's slug.
    const third = await createPerson(s.services);
    expect((await create(third, 'Admin', 'admin-tools-c')).status).toBe(201);
    expect(await profileOf(third)).toMatchObject({ display_name: 'Admin', slug: 'admin-2' });
    // A name or slug the provider set is kept.
    const fourth = await createPerson(s.services);
    expect((await api('PATCH', '/v1/me/profile', { slug: 'my-own-slug' }, fourth.session)).status).toBe(200);
    expect((await create(fourth, 'Fourth Api', 'fourth-api-d')).status).toBe(201);
    expect(await profileOf(fourth)).toMatchObject({ display_name: 'Fourth Api', slug: 'my-own-slug' });
  });

  it('verifying a live listing reports it live (verifying never changes the status)', async () => {
    const created = await importWeather('weather-live');
    const published = await api('POST', `/v1/provider/apis/${created.api_id}/publish`, { accept_terms: true });
    expect(published.body.data, show(published)).toMatchObject({ status: 'live' });
    const verified = await api('POST', `/v1/provider/apis/${created.api_id}/verify`);
    expect(verified.status, show(verified)).toBe(200);
    expect(verified.body.data).toMatchObject({ action: 'verify', status: 'live', verification: { passed: true } });
    const detail = await api('GET', `/v1/provider/apis/${created.api_id}`);
    expect(detail.body.data.status).toBe('live');
  });

  it('does not publish when the smoke test fails (422), unless verification is skipped', async () => {
    const created = await importWeather('weather-flaky');
    healthy = false;
    try {
      const res = await api('POST', `/v1/provider/apis/${created.api_id}/publish`, { accept_terms: true });
      expectFailure(res, 422, 'verification_failed');
      expect(res.body.error.details.verification.passed).toBe(false);
      expect(res.body.error.details.verification.checks[0]).toMatchObject({
        ok: false,
        status: 500,
        error: 'upstream answered HTTP 500',
      });
      expectFailure(await http(s.base, 'GET', '/v1/apis/weather-flaky'), 404, 'not_found');
      const skipped = await api('POST', `/v1/provider/apis/${created.api_id}/publish`, {
        accept_terms: true,
        skip_verify: true,
      });
      expect(skipped.body.data).toMatchObject({ status: 'live', verification: null });
      expect((await http(s.base, 'GET', '/v1/apis/weather-flaky')).status).toBe(200);
    } finally {
      healthy = true;
    }
  });

  it('creates listings with inline endpoints, validates input, and refuses a taken slug', async () => {
    const res = await api('POST', '/v1/provider/apis', {
      name: 'Echo',
      slug: 'echo',
      summary: 'Echoes',
      base_url: upstream.url,
      endpoints: [
        { method: 'get', path: '/echo/{word}', price_cents: 2, summary: 'Echo a word' },
        { method: 'POST', path: '/echo', input_schema: { type: 'object' } },
      ],
    });
    expect(res.status, show(res)).toBe(201);
    expect(
      res.body.data.endpoints.map((e: { method: string; path: string; price_cents: number }) => [
        e.method,
        e.path,
        e.price_cents,
      ]),
    ).toEqual([
      ['GET', '/echo/{word}', 2],
      ['POST', '/echo', 0],
    ]);
    expectFailure(
      await api('POST', '/v1/provider/apis', { name: 'x', slug: 'echo', summary: 's', base_url: upstream.url }),
      409,
      'conflict',
    );
    for (const body of [
      { name: 'x', slug: 'Bad Slug', summary: 's', base_url: upstream.url },
      { name: 'x', slug: 'ok-1', summary: 's', base_url: 'not a url' },
      { name: 'x', slug: 'ok-2', summary: 's', base_url: `${upstream.url}/?q=1` },
      { name: 'x', slug: 'ok-3', summary: 's', base_url: upstream.url, endpoints: [{ method: 'FETCH', path: '/x' }] },
      {
        name: 'x',
        slug: 'ok-4',
        summary: 's',
        base_url: upstream.url,
        endpoints: [{ method: 'GET', path: 'no-slash' }],
      },
      {
        name: 'x',
        slug: 'ok-5',
        summary: 's',
        base_url: upstream.url,
        endpoints: [{ method: 'GET', path: '/a/../b' }],
      },
      {
        name: 'x',
        slug: 'ok-6',
        summary: 's',
        base_url: upstream.url,
        endpoints: [{ method: 'GET', path: '/x', price_cents: -1 }],
      },
      {
        name: 'x',
        slug: 'ok-7',
        summary: 's',
        base_url: upstream.url,
        endpoints: [
          { method: 'GET', path: '/x' },
          { method: 'get', path: '/x' },
        ],
      },
      { name: 'x', slug: 'ok-8', summary: 's', base_url: upstream.url, org_id: stranger.orgId },
      { name: 'x', slug: 'ok-9', summary: 's', base_url: upstream.url, status: 'live' },
      {
        name: 'x',
        slug: 'ok-10',
        summary: 's',
        base_url: upstream.url,
        import_from: { type: 'openapi_url', url: `${upstream.url}/missing.json` },
      },
    ]) {
      expectFailure(await api('POST', '/v1/provider/apis', body), 400, 'validation_failed');
    }
    const [count] = await sql<{ n: string }>(s.db.url, "select count(*) as n from apis where slug like 'ok-%'");
    expect(count?.n).toBe('0');
  });

  it('validates credentials by injection type and never returns the secret', async () => {
    const created = await importWeather('weather-creds');
    const put = (body: unknown) => api('PUT', `/v1/provider/apis/${created.api_id}/credentials`, body);
    expectFailure(await put({ secret: 's', injection: 'header' }), 400, 'validation_failed');
    expectFailure(await put({ secret: 's', injection: 'basic' }), 400, 'validation_failed');
    expectFailure(
      await put({ secret: 's', injection: 'header', injection_name: 'Content-Length' }),
      400,
      'validation_failed',
    );
    expectFailure(await put({ secret: '', injection: 'bearer' }), 400, 'validation_failed');
    expect((await put({ secret: 'k1', injection: 'header', injection_name: 'X-Api-Key' })).body.data).toMatchObject({
      injection: 'header',
      injection_name: 'X-Api-Key',
    });
    expect((await put({ secret: 'user:pw', injection: 'basic' })).body.data).toMatchObject({
      injection: 'basic',
      injection_name: null,
    });
    expect(
      (await put({ secret: 'query-secret-k2', injection: 'query', injection_name: 'apikey' })).body.data,
    ).toMatchObject({
      injection: 'query',
    });
    // Query injection reaches the upstream as a parameter, and the stored evidence masks it.
    const before = upstream.seen.length;
    const verified = await api('POST', `/v1/provider/apis/${created.api_id}/verify`);
    expect(verified.body.data.verification.passed).toBe(true);
    expect(
      upstream.seen
        .slice(before)
        .every((c) => new URL(c.url, 'http://x').searchParams.get('apikey') === 'query-secret-k2'),
    ).toBe(true);
    expect(JSON.stringify(verified.body)).not.toContain('query-secret-k2');
  });

  it('keeps one org out of another’s listings (404) and needs provider:write', async () => {
    const mine = await importWeather('weather-private');
    const id = mine.api_id as string;
    const theirs = (m: string, p: string, body?: unknown) => api(m, p, body, stranger.session);
    expectFailure(await theirs('GET', `/v1/provider/apis/${id}`), 404, 'not_found');
    expectFailure(await theirs('PATCH', `/v1/provider/apis/${id}`, { name: 'pwned' }), 404, 'not_found');
    expectFailure(await theirs('PUT', `/v1/provider/apis/${id}/credentials`, { secret: 'x' }), 404, 'not_found');
    expectFailure(await theirs('POST', `/v1/provider/apis/${id}/verify`), 404, 'not_found');
    expectFailure(await theirs('POST', `/v1/provider/apis/${id}/publish`, { accept_terms: true }), 404, 'not_found');
    expectFailure(await theirs('POST', `/v1/provider/apis/${id}/unpublish`), 404, 'not_found');
    expectFailure(
      await theirs('PATCH', `/v1/provider/apis/${id}/pricing`, {
        endpoints: [{ endpoint_id: mine.endpoints[0].endpoint_id, price_cents: 1 }],
      }),
      404,
      'not_found',
    );
    const list = await theirs('GET', '/v1/provider/apis');
    expect(list.body.data.map((a: { api_id: string }) => a.api_id)).not.toContain(id);
    const [row] = await sql(s.db.url, 'select name, status from apis where id = $1', [id]);
    expect(row).toEqual({ name: 'Weather', status: 'draft' });
  });

  it('updates metadata; a new base_url resets the verification', async () => {
    const created = await importWeather('weather-meta');
    await api('POST', `/v1/provider/apis/${created.api_id}/verify`);
    const res = await api('PATCH', `/v1/provider/apis/${created.api_id}`, {
      summary: 'Better forecasts',
      base_url: `${upstream.url}/v3`,
    });
    expect(res.body.data).toMatchObject({
      summary: 'Better forecasts',
      base_url: `${upstream.url}/v3`,
      verification: { status: 'never', result: null },
    });
    expectFailure(
      await api('PATCH', `/v1/provider/apis/${created.api_id}`, { slug: 'renamed' }),
      400,
      'validation_failed',
    );
    expectFailure(await api('PATCH', `/v1/provider/apis/${created.api_id}`, {}), 400, 'validation_failed');
  });
});
