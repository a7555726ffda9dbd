// The console's endpoint editor, revisions and retirement over plain HTTP (issue 31, section 2, console part), against
// the full stack (Postgres, Temporal with the worker, SMTP capture), the gateway in this process and a loopback
// upstream. Each form: the happy path answers 303 (Post/Redirect/Get) and the page it leads to says what happened; a
// refusal is the page again with the message beside the field and what was typed. The parameter rows store the
// input_schema the OpenAPI import makes for the same operation; a failed verification is headed as failed and names
// host:port; a live API's changes form a revision published through the real workflow; a removed endpoint answers
// 410 endpoint_removed at the gateway (an announced one Deprecation and Sunset); archive (410 api_archived), restore
// and delete ask to confirm first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { parseOpenApiDocument } from '../../../core/providers/openapi-import.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { createConsumer } from '../../helpers/fixtures.js';
import { csrfOf, type FormBrowser, type PageResponse } from '../../helpers/form-browser.js';
import { startFullStack, type FullStack } from '../../helpers/full-stack.js';
import { signInByMail } from '../../helpers/console-forms.js';
import { expectFailure, http, serve } from '../../helpers/http.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

/** An OpenAPI document with these GET operations. */
const openApi = (paths: string[]) =>
  JSON.stringify({
    openapi: '3.1.0',
    info: { title: 'T', version: '1' },
    paths: Object.fromEntries(
      paths.map((p) => [p, { get: { summary: `Get ${p}`, responses: { 200: { description: 'ok' } } } }]),
    ),
  });

type Row = { name: string; in: string; type: string; required?: boolean; description?: string; example?: string };

/** The editor's fields for these parameter rows (`p0_name`…). */
function rowFields(rows: Row[]): Record<string, string> {
  const out: Record<string, string> = {};
  rows.forEach((r, i) => {
    Object.assign(out, {
      [`p${i}_name`]: r.name,
      [`p${i}_in`]: r.in,
      [`p${i}_type`]: r.type,
      [`p${i}_description`]: r.description ?? '',
      [`p${i}_example`]: r.example ?? '',
    });
    if (r.required) out[`p${i}_required`] = 'yes';
  });
  return out;
}

describe('console: the endpoint editor, revisions and retirement', () => {
  let s: FullStack;
  let upstream: Upstream;
  let gateway: GatewayHandler;
  let gw: RunningHttpServer;
  let provider: Person;
  let consumer: Person;
  let browser: FormBrowser;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.url === '/openapi.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(openApi(['/v1/a', '/v1/b']));
        return;
      }
      const ok = req.url?.startsWith('/v1/');
      res.writeHead(req.url?.startsWith('/v1/broken') ? 500 : ok ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path: req.url }));
    });
    s = await startFullStack({ schedules: false, env: { UPSTREAM_ALLOW_PRIVATE: 'true' } });
    gateway = createGatewayHandler(s.services);
    gw = await serve(gateway);
    provider = await createPerson(s.services);
    consumer = await createConsumer(s.services, 500);
    browser = (await signInByMail(s.base, s.smtp, provider.email, '/console/provider')).browser;
  });
  afterAll(async () => {
    await gateway?.drain.flush();
    await s?.services.earnings.foldAll();
    expect(await s?.services.ledger.findDrift()).toEqual([]);
    await gw?.close();
    await gateway?.close();
    await s?.close();
    await upstream?.close();
  });

  /** POST a console form with the CSRF token of the page at `from`. */
  async function submit(from: string, action: string, form: Record<string, string>): Promise<PageResponse> {
    const page = await browser.request('GET', from);
    return browser.request('POST', action, { csrf: csrfOf(page.text), ...form });
  }
  const call = (slug: string, p: string) => http(gw.url, 'GET', `/v1/proxy/${slug}${p}`, { token: consumer.apiKey });
  const expectPage = (res: PageResponse, status: number) => {
    expect(res.status, res.text.slice(0, 3000)).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
  };
  /** A 303 to `path?done=code`, and the page it leads to. */
  async function expectDone(res: PageResponse, path: string, code: string): Promise<PageResponse> {
    expect(res.status, res.text.slice(0, 3000)).toBe(303);
    expect(res.location).toBe(`${path}?done=${code}`);
    const page = await browser.request('GET', res.location!);
    expectPage(page, 200);
    return page;
  }

  async function createDraft(slug: string, endpoints: string): Promise<{ id: string; path: string }> {
    const res = await submit('/console/provider', '/console/provider/apis', {
      name: `Editor ${slug}`,
      slug,
      summary: 'Made in the console',
      base_url: upstream.url,
      endpoints,
    });
    expect(res.status, res.text.slice(0, 2000)).toBe(303);
    const path = res.location!.split('?')[0]!;
    return { id: path.split('/').pop()!, path };
  }
  const endpointsOf = (apiId: string) =>
    sql<{ id: string; method: string; path: string; price_cents: string; input_schema: unknown; summary: string }>(
      s.db.url,
      'select id, method, path, price_cents, input_schema, summary from endpoints where api_id = $1 order by path',
      [apiId],
    );

  it('adds an endpoint from parameter rows (303), storing the input_schema the OpenAPI import makes', async () => {
    const api = await createDraft('ed-rows', 'GET /v1/health');
    const form = await browser.request('GET', `${api.path}/endpoints/new`);
    expectPage(form, 200);
    for (const id of ['ep-method', 'ep-path', 'ep-summary', 'ep-price', 'p0-name', 'p0-in', 'p0-type', 'mode-raw']) {
      expect(form.text).toContain(`id="${id}"`);
    }
    const query = [
      { name: 'city', in: 'path', type: 'string', required: true, description: 'City name', example: 'London' },
      { name: 'units', in: 'query', type: 'string', description: 'Units', example: 'metric' },
      { name: 'days', in: 'query', type: 'integer', required: true, description: 'Days ahead', example: '3' },
    ];
    const added = await submit(`${api.path}/endpoints/new`, `${api.path}/endpoints`, {
      method: 'GET',
      path: '/v1/forecast/{city}',
      summary: 'Forecast for a city',
      price: '0.05',
      schema_mode: 'rows',
      ...rowFields(query),
    });
    const page = await expectDone(added, api.path, 'endpoint-added');
    expect(page.text).toContain('Endpoint added.');
    // Stored as jsonb: Postgres keeps an object's keys shortest first (as for an imported schema).
    expect(page.text).toContain('path: city · query: days, units');

    const body = [
      { name: 'text', in: 'body', type: 'string', required: true, description: 'The note', example: 'hi' },
      { name: 'tags', in: 'body', type: 'array', example: '["a","b"]' },
    ];
    const posted = await submit(`${api.path}/endpoints/new`, `${api.path}/endpoints`, {
      method: 'POST',
      path: '/v1/notes',
      summary: '',
      price: '',
      schema_mode: 'rows',
      ...rowFields(body),
    });
    await expectDone(posted, api.path, 'endpoint-added');

    // The same operations described in OpenAPI, through the importer.
    const imported = await parseOpenApiDocument({
      openapi: '3.1.0',
      info: { title: 'T', version: '1' },
      paths: {
        '/v1/forecast/{city}': {
          get: {
            parameters: [
              {
                name: 'city',
                in: 'path',
                required: true,
                description: 'City name',
                schema: { type: 'string', example: 'London' },
              },
              { name: 'units', in: 'query', description: 'Units', schema: { type: 'string', example: 'metric' } },
              {
                name: 'days',
                in: 'query',
                required: true,
                description: 'Days ahead',
                schema: { type: 'integer', example: 3 },
              },
            ],
            responses: { 200: { description: 'ok' } },
          },
        },
        '/v1/notes': {
          post: {
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: {
                      text: { type: 'string', example: 'hi', description: 'The note' },
                      tags: { type: 'array', example: ['a', 'b'] },
                    },
                    required: ['text'],
                  },
                },
              },
            },
            responses: { 200: { description: 'ok' } },
          },
        },
      },
    });
    const stored = await endpointsOf(api.id);
    const forecast = stored.find((e) => e.path === '/v1/forecast/{city}')!;
    const notes = stored.find((e) => e.path === '/v1/notes')!;
    expect(forecast).toMatchObject({ method: 'GET', price_cents: '5', summary: 'Forecast for a city' });
    expect(forecast.input_schema).toEqual(imported.endpoints.find((e) => e.method === 'GET')!.input_schema);
    expect(notes.input_schema).toEqual(imported.endpoints.find((e) => e.method === 'POST')!.input_schema);
    expect(forecast.input_schema).toEqual({
      type: 'object',
      properties: {
        path: {
          type: 'object',
          properties: { city: { type: 'string', example: 'London', description: 'City name' } },
          required: ['city'],
        },
        query: {
          type: 'object',
          properties: {
            units: { type: 'string', example: 'metric', description: 'Units' },
            days: { type: 'integer', example: 3, description: 'Days ahead' },
          },
          required: ['days'],
        },
      },
      required: ['path', 'query'],
    });

    // The edit page shows the rows again as they were typed (a round trip).
    const edit = await browser.request('GET', `${api.path}/endpoints/${forecast.id}`);
    expectPage(edit, 200);
    expect(edit.text).toMatch(/id="p0-name" name="p0_name"[^>]*value="city"/);
    expect(edit.text).toMatch(/id="p1-name" name="p1_name"[^>]*value="days"/);
    expect(edit.text).toMatch(/id="p1-example" name="p1_example"[^>]*value="3"/);
    expect(edit.text).toMatch(/id="mode-rows" name="schema_mode" value="rows" checked/);
    expect(edit.text).toContain('GET /v1/forecast/London?days=3&amp;units=metric');
  });

  it('refuses bad input beside the field, keeping what was typed; More parameter rows saves nothing', async () => {
    const api = await createDraft('ed-refuse', 'GET /v1/health');
    const from = `${api.path}/endpoints/new`;
    const base = { method: 'GET', path: '/v1/x/{id}', summary: 'Kept summary', price: '', schema_mode: 'rows' };

    const badExample = await submit(from, `${api.path}/endpoints`, {
      ...base,
      ...rowFields([{ name: 'days', in: 'query', type: 'integer', example: 'three' }]),
    });
    expectPage(badExample, 400);
    expect(badExample.text).toContain(
      '<p id="p0-example-error" class="error field-error">Parameter 1 (days), example: enter a whole number, like 42.</p>',
    );
    expect(badExample.text).toMatch(/id="p0-example" name="p0_example"[^>]*value="three" aria-invalid="true"/);
    expect(badExample.text).toContain('value="Kept summary"');

    const notInPath = await submit(from, `${api.path}/endpoints`, {
      ...base,
      ...rowFields([{ name: 'city', in: 'path', type: 'string' }]),
    });
    expectPage(notInPath, 400);
    expect(notInPath.text).toContain(
      'id="p0-in-error" class="error field-error">Parameter 1 (city), place: the path has no {city}: add it to the path, or choose query or body.',
    );

    const json = '{\n  "type": "object",\n  "properties": x\n}';
    const badJson = await submit(from, `${api.path}/endpoints`, { ...base, schema_mode: 'raw', input_schema: json });
    expectPage(badJson, 400);
    expect(badJson.text).toContain(
      'id="ep-input_schema-error" class="error field-error">Input JSON Schema: not valid JSON at line 3, column 17: unexpected “x”',
    );
    expect(badJson.text).toContain('&quot;properties&quot;: x\n}</textarea>');
    expect(badJson.text).toMatch(/id="mode-raw" name="schema_mode" value="raw" checked/);

    const notSchema = await submit(from, `${api.path}/endpoints`, {
      ...base,
      schema_mode: 'raw',
      input_schema: '{"type": "objekt"}',
      output_schema: '{"properties": {"a": {"$ref": "#/$defs/Missing"}}}',
    });
    expectPage(notSchema, 400);
    expect(notSchema.text).toContain(
      'Input JSON Schema: not a valid JSON Schema at type: must be equal to one of the allowed values',
    );
    expect(notSchema.text).toContain(
      'id="ep-output_schema-error" class="error field-error">Output JSON Schema: not a usable JSON Schema',
    );

    const badPath = await submit(from, `${api.path}/endpoints`, { ...base, path: 'no-slash' });
    expectPage(badPath, 400);
    expect(badPath.text).toContain(
      'id="ep-path-error" class="error field-error">Path: must start with / and use URL path characters.',
    );
    expect(badPath.text).toContain('value="no-slash"');

    const taken = await submit(from, `${api.path}/endpoints`, { ...base, path: '/v1/health' });
    expectPage(taken, 409);
    expect(taken.text).toMatch(/id="ep-path-error" class="error field-error">GET \/v1\/health is already an endpoint/);

    const more = await submit(from, `${api.path}/endpoints`, {
      ...base,
      intent: 'rows',
      ...rowFields([{ name: 'q', in: 'query', type: 'string', example: 'kept' }]),
    });
    expectPage(more, 200);
    expect(more.text).toMatch(/id="p0-example" name="p0_example"[^>]*value="kept"/);
    expect(more.text).toContain('id="p5-name"');
    expect((await endpointsOf(api.id)).map((e) => e.path)).toEqual(['/v1/health']);

    // A raw JSON Schema that is valid is stored as typed.
    const raw = {
      type: 'object',
      properties: { query: { type: 'object', properties: { q: { type: 'string', minLength: 2 } } } },
    };
    const saved = await submit(from, `${api.path}/endpoints`, {
      ...base,
      path: '/v1/search',
      schema_mode: 'raw',
      input_schema: JSON.stringify(raw),
    });
    await expectDone(saved, api.path, 'endpoint-added');
    expect((await endpointsOf(api.id)).find((e) => e.path === '/v1/search')!.input_schema).toEqual(raw);
    // A large schema fits the editor's form (the other forms take 16 KB); over 64 KB of JSON is refused beside it.
    const fields = (n: number) => ({
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: n }, (_, i) => [`field_${i}`, { type: 'string', description: 'd'.repeat(50) }]),
      ),
    });
    const large = await submit(from, `${api.path}/endpoints`, {
      ...base,
      path: '/v1/large',
      schema_mode: 'raw',
      input_schema: JSON.stringify(fields(600), null, 2),
    });
    await expectDone(large, api.path, 'endpoint-added');
    const tooLarge = await submit(from, `${api.path}/endpoints`, {
      ...base,
      path: '/v1/too-large',
      schema_mode: 'raw',
      input_schema: JSON.stringify(fields(1000)),
    });
    expectPage(tooLarge, 400);
    expect(tooLarge.text).toContain('Input JSON Schema: use at most 65536 bytes of JSON.');
    // The rows cannot say minLength: its edit page opens on the JSON Schema.
    const id = (await endpointsOf(api.id)).find((e) => e.path === '/v1/search')!.id;
    const edit = await browser.request('GET', `${api.path}/endpoints/${id}`);
    expect(edit.text).toMatch(/id="mode-raw" name="schema_mode" value="raw" checked/);
    expect(edit.text).toContain('&quot;minLength&quot;: 2');
  });

  it('re-imports from an OpenAPI URL, keeping missing endpoints only when asked; a bad URL is refused beside it', async () => {
    const api = await createDraft('ed-import', 'GET /v1/a 0.02\nGET /v1/old');
    const bad = await submit(api.path, `${api.path}/import`, { url: 'not a url' });
    expectPage(bad, 400);
    expect(bad.text).toMatch(/id="import-url-error" class="error field-error">OpenAPI document URL: /);
    expect(bad.text).toContain('value="not a url"');

    const kept = await submit(api.path, `${api.path}/import`, {
      url: `${upstream.url}/openapi.json`,
      keep_missing: 'yes',
    });
    await expectDone(kept, api.path, 'reimported');
    expect((await endpointsOf(api.id)).map((e) => [e.path, e.price_cents, e.summary])).toEqual([
      ['/v1/a', '2', 'Get /v1/a'],
      ['/v1/b', '0', 'Get /v1/b'],
      ['/v1/old', '0', null],
    ]);
    const mirrored = await submit(api.path, `${api.path}/import`, { url: `${upstream.url}/openapi.json` });
    const page = await expectDone(mirrored, api.path, 'reimported');
    expect((await endpointsOf(api.id)).map((e) => e.path)).toEqual(['/v1/a', '/v1/b']);
    expect(page.text).toContain(`value="${upstream.url}/openapi.json"`);
  });

  it('a failed verification is headed as failed and names host:port; fixing the endpoint in the console publishes', async () => {
    const api = await createDraft('ed-fix', 'GET /wrong Today');
    const failed = await submit(api.path, `${api.path}/verify`, {});
    const page = await expectDone(failed, api.path, 'verify-failed');
    expect(page.text).toContain(
      `<div class="banner bad" role="alert"><p><strong>Verification failed</strong> at 127.0.0.1:${upstream.port}: GET /wrong: upstream answered HTTP 404.`,
    );
    expect(page.text).not.toContain('Verification finished');
    expect(page.text).toContain(`<code>127.0.0.1:${upstream.port}</code>`);

    const publishFailed = await submit(api.path, `${api.path}/publish`, { accept_terms: 'yes' });
    const notPublished = await expectDone(publishFailed, api.path, 'publish-failed');
    expect(notPublished.text).toContain(
      `<strong>Verification failed</strong> at 127.0.0.1:${upstream.port}: GET /wrong`,
    );
    expect(notPublished.text).toContain('The API was not published');

    // Fix the path: a removal plus an addition, and the page says so.
    const [wrong] = await endpointsOf(api.id);
    const moved = await submit(`${api.path}/endpoints/${wrong!.id}`, `${api.path}/endpoints/${wrong!.id}`, {
      method: 'GET',
      path: '/v1/right',
      summary: 'Today',
      schema_mode: 'rows',
      output_schema: '{"type": "object", "properties": {"path": {"type": "string"}}}',
    });
    const after = await expectDone(moved, api.path, 'endpoint-moved');
    expect(after.text).toContain(
      'Method or path changed: that is a removal of the old endpoint plus an addition of a new one',
    );
    const [right] = await endpointsOf(api.id);
    expect(right).toMatchObject({ path: '/v1/right', summary: 'Today' });
    expect(right!.id).not.toBe(wrong!.id);

    await expectDone(await submit(api.path, `${api.path}/verify`, {}), api.path, 'verified');
    const live = await expectDone(
      await submit(api.path, `${api.path}/publish`, { accept_terms: 'yes' }),
      api.path,
      'published',
    );
    expect(live.text).toContain('No open revision');
    expect((await call('ed-fix', '/v1/right')).status).toBe(200);
  });

  it('a live API: edits form a revision; Publish revision runs the workflow (a failed one stays open, naming host:port); Discard', async () => {
    const api = await createDraft('ed-live', 'GET /v1/right');
    await submit(api.path, `${api.path}/publish`, { accept_terms: 'yes' });
    const staged = await submit(`${api.path}/endpoints/new`, `${api.path}/endpoints`, {
      method: 'GET',
      path: '/v1/broken',
      summary: 'Not yet',
      schema_mode: 'rows',
    });
    const page = await expectDone(staged, api.path, 'endpoint-staged');
    expect(page.text).toMatch(/Revision 1, opened/);
    expect(page.text).toMatch(/<h3>Added<\/h3><ul><li><code>GET \/v1\/broken<\/code> Not yet<\/li>/);
    expect(page.text).toContain('New in the revision');
    expectFailure(await call('ed-live', '/v1/broken'), 404, 'not_found');

    const noTerms = await submit(api.path, `${api.path}/revision/publish`, {});
    expectPage(noTerms, 400);
    expect(noTerms.text).toContain(
      'id="revision_accept_terms-error" class="error field-error">Tick “I accept the provider terms” to publish the revision.',
    );

    const failed = await submit(api.path, `${api.path}/revision/publish`, { accept_terms: 'yes' });
    const shown = await expectDone(failed, api.path, 'revision-failed');
    expect(shown.text).toContain(
      `<strong>Verification failed</strong> at 127.0.0.1:${upstream.port}: GET /v1/broken: upstream answered HTTP 500.`,
    );
    expect(shown.text).toContain('The revision was not published and stays open');
    expect(shown.text).toContain('Revision 1, opened');

    const discarded = await submit(api.path, `${api.path}/revision/discard`, {});
    expect((await expectDone(discarded, api.path, 'revision-discarded')).text).toContain('No open revision');

    // An edit of a live endpoint and an addition, published together.
    const [right] = await endpointsOf(api.id);
    await submit(`${api.path}/endpoints/${right!.id}`, `${api.path}/endpoints/${right!.id}`, {
      method: 'GET',
      path: '/v1/right',
      summary: 'Renamed in a revision',
      schema_mode: 'rows',
      ...rowFields([{ name: 'q', in: 'query', type: 'string', example: 'x' }]),
    });
    await submit(`${api.path}/endpoints/new`, `${api.path}/endpoints`, {
      method: 'GET',
      path: '/v1/more',
      schema_mode: 'rows',
    });
    const review = await browser.request('GET', api.path);
    expect(review.text).toMatch(/Revision 2, opened/);
    expect(review.text).toContain('<h3>Changed</h3><ul><li><code>GET /v1/right</code> (summary, input schema)</li>');
    expect((await endpointsOf(api.id)).map((e) => e.summary)).toEqual([null]); // nothing applied yet
    const published = await submit(api.path, `${api.path}/revision/publish`, { accept_terms: 'yes' });
    await expectDone(published, api.path, 'revision-published');
    const rows = await sql<{ status: string; number: number }>(
      s.db.url,
      'select status, number from api_revisions where api_id = $1 order by number',
      [api.id],
    );
    expect(rows).toEqual([
      { status: 'discarded', number: 1 },
      { status: 'published', number: 2 },
    ]);
    expect((await endpointsOf(api.id)).map((e) => [e.path, e.summary])).toEqual([
      ['/v1/more', null],
      ['/v1/right', 'Renamed in a revision'],
    ]);
    expect((await call('ed-live', '/v1/more')).status).toBe(200);
  });

  it('removes with a confirmation: a quiet endpoint goes at once (410), a called one is announced (Deprecation, Sunset)', async () => {
    const api = await createDraft('ed-remove', 'GET /v1/quiet\nGET /v1/busy');
    await submit(api.path, `${api.path}/publish`, { accept_terms: 'yes' });
    expect((await call('ed-remove', '/v1/busy')).status).toBe(200);
    await gateway.drain.flush();
    const ids = Object.fromEntries((await endpointsOf(api.id)).map((e) => [e.path, e.id]));

    const quiet = await browser.request('GET', `${api.path}/endpoints/${ids['/v1/quiet']}/remove`);
    expectPage(quiet, 200);
    expect(quiet.text).toContain(
      'it takes effect at once when the revision is published (no call in the last 30 days)',
    );
    const busy = await browser.request('GET', `${api.path}/endpoints/${ids['/v1/busy']}/remove`);
    expect(busy.text).toMatch(
      /it had calls in the last 30 days, so callers get 7 days of notice: published now, its answers carry Deprecation and Sunset headers until \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC, then 410 endpoint_removed/,
    );

    // A POST without confirm=yes shows the step again and changes nothing.
    const unconfirmed = await submit(api.path, `${api.path}/endpoints/${ids['/v1/quiet']}/remove`, {});
    expectPage(unconfirmed, 200);
    expect(unconfirmed.text).toContain('Remove GET /v1/quiet?');
    expect(await sql(s.db.url, 'select 1 from api_revisions where api_id = $1', [api.id])).toEqual([]);

    for (const path of ['/v1/quiet', '/v1/busy']) {
      const removed = await submit(api.path, `${api.path}/endpoints/${ids[path]}/remove`, { confirm: 'yes' });
      await expectDone(removed, api.path, 'removal-staged');
    }
    const review = await browser.request('GET', api.path);
    expect(review.text).toContain('<h3>Removed</h3>');
    expect(review.text).toContain('Removal staged in the revision');
    await expectDone(
      await submit(api.path, `${api.path}/revision/publish`, { accept_terms: 'yes' }),
      api.path,
      'revision-published',
    );

    const gone = await call('ed-remove', '/v1/quiet');
    expectFailure(gone, 410, 'endpoint_removed');
    const announced = await call('ed-remove', '/v1/busy');
    expect(announced.status).toBe(200);
    expect(announced.headers.get('deprecation')).toMatch(/^@\d+$/);
    const sunset = announced.headers.get('sunset')!;
    expect(new Date(sunset).getTime()).toBeGreaterThan(Date.now() + 6 * 86_400_000);

    const page = await browser.request('GET', api.path);
    expect(page.text).toMatch(
      /Removed endpoints[\s\S]*<code>\/v1\/quiet<\/code><\/td><td>410 endpoint_removed since \d{4}-\d{2}-\d{2}/,
    );
    const sunsetShown = new Date(sunset).toISOString().slice(0, 10);
    expect(page.text).toMatch(
      new RegExp(
        `<strong>Deprecated</strong>: removal announced;[^<]*<code>Deprecation</code> and <code>Sunset</code> headers until ${sunsetShown}`,
      ),
    );
  });

  it('retires: a live API is unpublished first; archive (410 api_archived) and delete confirm first; restore', async () => {
    const api = await createDraft('ed-retire', 'GET /v1/right');
    await submit(api.path, `${api.path}/publish`, { accept_terms: 'yes' });
    expect((await browser.request('GET', api.path)).text).toContain('To retire this API, unpublish it first');
    const refused = await browser.request('GET', `${api.path}/archive`);
    expectPage(refused, 409);
    expect(refused.text).toContain('This API is live: unpublish it first, then archive it.');

    await expectDone(await submit(api.path, `${api.path}/unpublish`, {}), api.path, 'unpublished');
    const confirm = await browser.request('GET', `${api.path}/archive`);
    expectPage(confirm, 200);
    expect(confirm.text).toContain(
      'answer 410 api_archived. Its history stays: calls, usage, earnings and ledger rows. The slug ed-retire stays reserved for your organization',
    );
    expectPage(await submit(api.path, `${api.path}/archive`, {}), 200); // no confirm=yes: the step again
    expect(
      (await sql<{ status: string }>(s.db.url, 'select status from apis where id = $1', [api.id]))[0]!.status,
    ).toBe('draft');
    const noDelete = await browser.request('GET', `${api.path}/delete`);
    expectPage(noDelete, 409);
    expect(noDelete.text).toContain('cannot be deleted: archive it instead');

    const archived = await submit(`${api.path}/archive`, `${api.path}/archive`, { confirm: 'yes' });
    const page = await expectDone(archived, api.path, 'archived');
    expect(page.text).toContain('Restore to draft');
    expect(page.text).not.toContain('Add an endpoint');
    expectFailure(await http(s.base, 'GET', '/v1/apis/ed-retire'), 410, 'api_archived');
    expectFailure(await call('ed-retire', '/v1/right'), 410, 'api_archived');
    const list = await browser.request('GET', '/console/provider');
    expect(list.text).toMatch(/<h2 id="archived-h">Archived APIs<\/h2>[\s\S]*Editor ed-retire/);
    expect(list.text.split('<h2 id="archived-h">')[0]).not.toContain('Editor ed-retire');

    await expectDone(await submit(api.path, `${api.path}/restore`, {}), api.path, 'restored');
    expect(
      (await sql<{ status: string }>(s.db.url, 'select status from apis where id = $1', [api.id]))[0]!.status,
    ).toBe('draft');

    const never = await createDraft('ed-delete', 'GET /v1/x');
    const ask = await browser.request('GET', `${never.path}/delete`);
    expectPage(ask, 200);
    expect(ask.text).toContain('was never live, so it can be deleted');
    const deleted = await submit(`${never.path}/delete`, `${never.path}/delete`, { confirm: 'yes' });
    expect((await expectDone(deleted, '/console/provider', 'deleted')).text).toContain(
      'API deleted: its slug is free again.',
    );
    expect(await sql(s.db.url, 'select 1 from apis where id = $1', [never.id])).toEqual([]);
  });

  it('every new form refuses a post without the CSRF token (403)', async () => {
    const api = await createDraft('ed-csrf', 'GET /v1/x');
    const [e] = await endpointsOf(api.id);
    for (const action of [
      `${api.path}/endpoints`,
      `${api.path}/endpoints/${e!.id}`,
      `${api.path}/endpoints/${e!.id}/remove`,
      `${api.path}/import`,
      `${api.path}/revision/publish`,
      `${api.path}/revision/discard`,
      `${api.path}/archive`,
      `${api.path}/delete`,
      `${api.path}/restore`,
    ]) {
      const res = await browser.request('POST', action, { confirm: 'yes', method: 'GET', path: '/v1/y' });
      expectPage(res, 403);
      expect(res.text).toContain('This form has expired');
    }
    expect((await endpointsOf(api.id)).map((x) => x.path)).toEqual(['/v1/x']);
  });
});
