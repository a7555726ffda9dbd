// Agent tools for every listing (issue 31 item 3), through the SDK's v2 client over the real HTTP server in both eras:
// an API made with the console's create form (endpoints without schemas) and one made over REST with `endpoints`
// but no schemas, installed with add_api_tools, take path parameters (required strings), any query parameters and a
// JSON body, and a real loopback upstream receives exactly those; schemas with properties become flat arguments,
// a name two places use is prefixed by its place (`path_id`, `query_id`); the grouped `path`/`query`/`body` form
// still works; both forms at once and unknown arguments are refused (validation_failed, with "did you mean") and
// reach no upstream, for installed tools and for the default tools alike.
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { http, serve, describe as show } from '../../helpers/http.js';
import { type Data, ERAS, erasOf, ok, refused, textOf } from '../../helpers/mcp-eras.js';
import { serveMcp, type ServedMcp } from '../../helpers/mcp-served.js';
import { closeAll } from '../../helpers/fixtures.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

/** A REST endpoint whose path and query both have an `id`, and one whose whole schema is an object body. */
const RECORD_SCHEMA = {
  type: 'object',
  properties: {
    path: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    query: { type: 'object', properties: { id: { type: 'string' }, fields: { type: 'string' } } },
  },
  required: ['path'],
};
const ORDER_SCHEMA = {
  type: 'object',
  properties: { qty: { type: 'integer', minimum: 1 }, note: { type: 'string' } },
  required: ['qty'],
};

describe('agent tools for every listing: open shapes, flat arguments, did you mean', () => {
  let stack: TestStack;
  let served: ServedMcp;
  let rest: RunningHttpServer;
  let upstream: Upstream;
  let provider: Person;
  let consoleSlug: string;
  let restSlug: string;

  /** Publish as the publish workflow ends (its own tests run it): the listing goes live. */
  const goLive = (apiId: string) => stack.services.providerLifecycle.setStatus(apiId, 'live');

  beforeAll(async () => {
    upstream = await startUpstream((req, res, body) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ method: req.method, url: req.url, body: body || null }));
    });
    stack = await createTestStack();
    served = await serveMcp(stack.services);
    rest = await serve(createApiApp(stack.services).callback());
    provider = await createPerson(stack.services);

    // The console's new-API form, as a signed-in person posts it (the CSRF double submit: cookie and field).
    consoleSlug = `console-made-${randomBytes(3).toString('hex')}`;
    const csrf = 'c'.repeat(32);
    const form = new URLSearchParams({
      csrf,
      name: 'Console Made',
      slug: consoleSlug,
      summary: 'Items, made in the console',
      base_url: upstream.url,
      endpoints: 'GET /items 0.01 List items\nGET /items/{id} One item\nPOST /items/{id}/notes 0.02 Add a note',
    });
    const created = await fetch(`${rest.url}/console/provider/apis`, {
      method: 'POST',
      headers: {
        cookie: `svc_session=${provider.session}; svc_csrf=${csrf}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: form.toString(),
      redirect: 'manual',
    });
    expect(created.status, await created.text()).toBe(303);
    const consoleId = /\/console\/provider\/apis\/(api_\w+)/.exec(created.headers.get('location') ?? '')![1]!;
    // The premise: the console's form stores endpoints without any schema.
    const schemas = await sql<{ input_schema: unknown }>(
      stack.db.url,
      'select input_schema from endpoints where api_id = $1',
      [consoleId],
    );
    expect(schemas.map((r) => r.input_schema)).toEqual([null, null, null]);
    await goLive(consoleId);

    restSlug = `rest-made-${randomBytes(3).toString('hex')}`;
    const made = await http(rest.url, 'POST', '/v1/provider/apis', {
      token: provider.session,
      body: {
        name: 'REST Made',
        slug: restSlug,
        summary: 'Records and orders, made over REST',
        base_url: upstream.url,
        endpoints: [
          { method: 'PUT', path: '/things/{thing}', price_cents: 0 },
          { method: 'GET', path: '/records/{id}', price_cents: 0, input_schema: RECORD_SCHEMA },
          { method: 'POST', path: '/orders', price_cents: 0, input_schema: ORDER_SCHEMA },
        ],
      },
    });
    expect(made.status, show(made)).toBe(201);
    await goLive(made.body.data.api_id as string);
  });
  afterAll(async () => {
    await served?.close();
    await stack?.services.earnings.foldAll();
    expect(await stack?.services.ledger.findDrift()).toEqual([]);
    await closeAll(rest, stack, upstream);
  });

  const { connect, creditedPerson, creditOf } = erasOf(
    () => stack,
    () => served,
    'arguments-test',
  );
  const list = (client: Client) => client.listTools(undefined, { cacheMode: 'refresh' });
  const schemaOf = async (client: Client, name: string) =>
    (await list(client)).tools.find((t) => t.name === name)!.inputSchema as Data;
  /** The upstream's answer echoes what it received: method, URL (path and query) and body. */
  const received = (result: Data) => result.body as { method: string; url: string; body: string | null };

  for (const era of ERAS) {
    it(`${era}: a console-made API's tools take path parameters, any query and a JSON body`, async () => {
      const person = await creditedPerson(20);
      const client = await connect(era, person.apiKey);
      const added = await ok(client, 'add_api_tools', { slug: consoleSlug });
      const [listItems, oneItem, addNote] = added.added as string[];
      expect(added.added).toEqual([
        `${consoleSlug}__get_items`,
        `${consoleSlug}__get_items_id`,
        `${consoleSlug}__post_items_id_notes`,
      ]);

      expect(await schemaOf(client, listItems!)).toMatchObject({
        properties: { query: { type: 'object' }, idempotency_key: { type: 'string' } },
        additionalProperties: false,
      });
      expect(Object.keys((await schemaOf(client, oneItem!)).properties)).toEqual(['id', 'query', 'idempotency_key']);
      const notes = await schemaOf(client, addNote!);
      expect(Object.keys(notes.properties)).toEqual(['id', 'query', 'body', 'idempotency_key']);
      expect(notes).toMatchObject({ required: ['id'], properties: { id: { type: 'string' } } });

      const before = upstream.seen.length;
      // A query parameter reaches the upstream.
      const listed = await ok(client, listItems!, { query: { q: 'desk lamp', limit: 5, tag: ['a', 'b'] } });
      expect(listed).toMatchObject({ status: 200, billing: { cost_cents: 1 } });
      expect(received(listed)).toEqual({ method: 'GET', url: '/items?q=desk+lamp&limit=5&tag=a&tag=b', body: null });
      // A path parameter, percent-encoded.
      const one = await ok(client, oneItem!, { id: 'x 1' });
      expect(received(one)).toMatchObject({ method: 'GET', url: '/items/x%201' });
      // A JSON body (and a query) on a POST.
      const note = { text: 'hello', tags: ['a'], n: 1 };
      const posted = await ok(client, addNote!, { id: '42', body: note, query: { draft: true } });
      expect(received(posted)).toEqual({
        method: 'POST',
        url: '/items/42/notes?draft=true',
        body: JSON.stringify(note),
      });
      expect(posted.billing).toMatchObject({ cost_cents: 2 });
      // The grouped form of before: the same request.
      const grouped = await ok(client, addNote!, { path: { id: '42' }, body: note });
      expect(received(grouped)).toEqual({ method: 'POST', url: '/items/42/notes', body: JSON.stringify(note) });
      const seen = upstream.seen.slice(before).map((r) => `${r.method} ${r.url} ${r.body}`);
      expect(seen).toEqual([
        'GET /items?q=desk+lamp&limit=5&tag=a&tag=b ',
        'GET /items/x%201 ',
        `POST /items/42/notes?draft=true ${JSON.stringify(note)}`,
        `POST /items/42/notes ${JSON.stringify(note)}`,
      ]);

      // Refusals: nothing reaches the upstream, nothing is charged.
      const q = await refused(client, listItems!, { q: 'lamp' }, 'validation_failed');
      expect(q.message).toContain('Unknown argument `q`: did you mean `query`?');
      expect(q.details).toMatchObject({ unknown: ['q'], suggestions: { q: 'query' } });
      const both = await refused(client, addNote!, { id: '42', path: { id: '42' } }, 'validation_failed');
      expect(both.message).toMatch(/^Send either flat arguments \(here `id`\) or the grouped form \(here `path`\)/);
      const missing = await refused(client, oneItem!, {}, 'validation_failed');
      expect(missing.message).toContain("must have required property 'id'");
      const number = await refused(client, oneItem!, { id: 7 }, 'validation_failed');
      expect(number.message).toContain('id: must be string');
      await refused(client, listItems!, { query: { deep: { not: 'a scalar' } } }, 'validation_failed');
      expect(upstream.seen.length).toBe(before + 4);
      expect(await creditOf(person.orgId)).toBe(20 - 1 - 2 - 2);
    });

    it(`${era}: a REST-made API: open shapes without a schema, flat names prefixed by place, object bodies flat`, async () => {
      const person = await creditedPerson(0);
      const client = await connect(era, person.apiKey);
      const added = await ok(client, 'add_api_tools', { slug: restSlug });
      const [putThing, getRecord, postOrder] = added.added as string[];

      expect(Object.keys((await schemaOf(client, putThing!)).properties)).toEqual([
        'thing',
        'query',
        'body',
        'idempotency_key',
      ]);
      const record = await schemaOf(client, getRecord!);
      expect(Object.keys(record.properties)).toEqual(['path_id', 'query_id', 'fields', 'idempotency_key']);
      expect(record).toMatchObject({
        required: ['path_id'],
        properties: { path_id: { description: 'Path parameter `id`.' }, query_id: { type: 'string' } },
      });
      const order = await schemaOf(client, postOrder!);
      expect(order).toMatchObject({ required: ['qty'], properties: { qty: { type: 'integer', minimum: 1 } } });

      const before = upstream.seen.length;
      const put = await ok(client, putThing!, { thing: 'lamp', body: [1, 'two', { three: 3 }] });
      expect(received(put)).toEqual({ method: 'PUT', url: '/things/lamp', body: '[1,"two",{"three":3}]' });
      const got = await ok(client, getRecord!, { path_id: '7', query_id: 'abc', fields: 'name' });
      expect(received(got)).toMatchObject({ method: 'GET', url: '/records/7?id=abc&fields=name' });
      const groupedGet = await ok(client, getRecord!, { path: { id: '8' }, query: { id: 'xyz' } });
      expect(received(groupedGet)).toMatchObject({ url: '/records/8?id=xyz' });
      const ordered = await ok(client, postOrder!, { qty: 3, note: 'fragile' });
      expect(received(ordered)).toEqual({ method: 'POST', url: '/orders', body: '{"qty":3,"note":"fragile"}' });
      expect(upstream.seen.length).toBe(before + 4);

      const typo = await refused(client, getRecord!, { path_id: '7', feilds: 'name' }, 'validation_failed');
      expect(typo.message).toContain('Unknown argument `feilds`: did you mean `fields`?');
      const id = await refused(client, getRecord!, { id: '7' }, 'validation_failed');
      expect(id.details).toMatchObject({
        unknown: ['id'],
        expected: ['path_id', 'query_id', 'fields', 'idempotency_key'],
      });
      await refused(client, postOrder!, { qty: 0 }, 'validation_failed');
      await refused(client, postOrder!, { qty: 1, body: { qty: 1 } }, 'validation_failed');
      expect(upstream.seen.length).toBe(before + 4);
    });

    it(`${era}: a default tool's unknown argument is refused with the one meant, before anything runs`, async () => {
      // A key without catalog:read: the argument check comes first, so the answer is about the argument.
      const person = await creditedPerson(0, ['proxy:call']);
      const client = await connect(era, person.apiKey);
      const q = await refused(client, 'discover_tools', { q: 'weather' }, 'validation_failed');
      expect(q.message).toMatch(/^Unknown argument `q`: did you mean `query`\? This tool takes `query`, /);
      expect(q.details).toMatchObject({ unknown: ['q'], suggestions: { q: 'query' }, issues: [{ path: 'q' }] });
      const typo = await client.callTool({ name: 'call_api', arguments: { slug: 'x', endpiont: '/a' } });
      expect(textOf(typo)).toMatch(/^validation_failed: Unknown argument `endpiont`: did you mean `endpoint`\?/);
      const none = await refused(client, 'get_categories', { nope: 1 }, 'validation_failed');
      expect(none.message).toBe('Unknown argument `nope`. This tool takes no arguments.');
      // svc_register took no arguments but silently dropped any; now it refuses them too.
      await refused(client, 'svc_register', { email: 'a@example.com' }, 'validation_failed');
      // Known arguments still go to the tool (here refused for the scope, not the arguments).
      await refused(client, 'discover_tools', { query: 'weather' }, 'forbidden');
    });
  }
});
