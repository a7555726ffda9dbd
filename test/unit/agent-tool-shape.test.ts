// Installed API tools' names and input schemas (core/agent-tools/tool-shape.ts): valid MCP names, unique per key,
// and a schema made of the endpoint's path parameters, query and body, whatever form the provider gave.
import { describe, expect, it } from 'vitest';
import { MAX_TOOL_NAME, toolInputSchema, toolNameFor } from '../../core/agent-tools/tool-shape.js';

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

describe('installed tool names', () => {
  it('are <slug>__<operationId or method_path>, normalized', () => {
    const none = new Set<string>();
    expect(toolNameFor('weather', { method: 'GET', path: '/forecast/{city}' }, none)).toBe(
      'weather__get_forecast_city',
    );
    expect(toolNameFor('weather', { method: 'POST', path: '/x', operationId: 'create Alert!' }, none)).toBe(
      'weather__create_Alert',
    );
    expect(toolNameFor('w', { method: 'GET', path: '/' }, none)).toBe('w__get');
  });

  it('stay within 64 valid characters and take a suffix on a collision', () => {
    const slug = 'a'.repeat(60);
    const first = toolNameFor(slug, { method: 'GET', path: '/long/path' }, new Set());
    expect(first).toMatch(NAME);
    expect(first.length).toBe(MAX_TOOL_NAME);
    const second = toolNameFor(slug, { method: 'GET', path: '/long/path' }, new Set([first]));
    expect(second).toMatch(NAME);
    expect(second).not.toBe(first);
    expect(second.endsWith('_2')).toBe(true);
    const third = toolNameFor(slug, { method: 'GET', path: '/long/path' }, new Set([first, second]));
    expect(third.endsWith('_3')).toBe(true);
  });
});

describe('installed tool input schemas', () => {
  const ORDER = {
    type: 'object',
    properties: {
      path: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
      query: { type: 'object', properties: { dry: { type: 'boolean' } } },
      header: { type: 'object', properties: { 'x-trace': { type: 'string' } } },
      body: { $ref: '#/$defs/Order' },
    },
    required: ['path', 'body'],
    $defs: { Order: { type: 'object' } },
  };

  it("take the import's places flat (no headers), require every path parameter, never allow extra arguments", () => {
    const { schema, args } = toolInputSchema({ method: 'POST', path: '/orders/{id}', inputSchema: ORDER });
    // A body that is not an object schema with properties (here a $ref) stays one `body` argument.
    expect(Object.keys(schema.properties as object)).toEqual(['id', 'dry', 'body', 'idempotency_key']);
    expect(schema).toMatchObject({
      required: ['id', 'body'],
      additionalProperties: false,
      $defs: { Order: { type: 'object' } },
      properties: { id: { type: 'integer' }, dry: { type: 'boolean' }, body: { $ref: '#/$defs/Order' } },
    });
    expect(args).toEqual([
      { name: 'id', in: 'path', param: 'id' },
      { name: 'dry', in: 'query', param: 'dry' },
      { name: 'body', in: 'body' },
    ]);
  });

  it('keep the grouped form of before (path, query, body) beside the flat one', () => {
    const { grouped } = toolInputSchema({ method: 'POST', path: '/orders/{id}', inputSchema: ORDER });
    expect(Object.keys(grouped.properties as object)).toEqual(['path', 'query', 'body', 'idempotency_key']);
    expect(grouped).toMatchObject({
      required: ['path', 'body'],
      additionalProperties: false,
      $defs: { Order: { type: 'object' } },
      properties: { path: { properties: { id: { type: 'integer' } }, required: ['id'] } },
    });
  });

  it('flatten an object body, prefix a name two places use (or a fixed one) by its place, keep valid names', () => {
    const { schema, args } = toolInputSchema({
      method: 'PUT',
      path: '/items/{id}',
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'object', properties: { id: { type: 'string' }, 'filter[name]': { type: 'string' } } },
          body: {
            type: 'object',
            properties: { id: { type: 'integer' }, qty: { type: 'integer' }, idempotency_key: { type: 'string' } },
            required: ['qty'],
          },
        },
        required: ['body'],
      },
    });
    expect(args.map((a) => a.name)).toEqual([
      'path_id',
      'query_id',
      'filter_name_',
      'body_id',
      'qty',
      'body_idempotency_key',
    ]);
    expect(schema.required).toEqual(['path_id', 'qty']);
    expect(schema.properties).toMatchObject({
      path_id: { type: 'string', description: 'Path parameter `id`.' },
      query_id: { type: 'string', description: 'Query parameter `id`.' },
      body_id: { type: 'integer', description: 'Body field `id`.' },
      qty: { type: 'integer' },
      idempotency_key: { type: 'string', maxLength: 200 },
    });
    expect((schema.properties as Record<string, object>).qty).not.toHaveProperty('description');
    for (const name of Object.keys(schema.properties as object)) expect(name).toMatch(/^[A-Za-z0-9_.-]{1,64}$/);
  });

  it('treat any other schema as the body (the query for GET); path parameters are required strings', () => {
    const own = { type: 'object', properties: { q: { type: 'string' } } };
    const post = toolInputSchema({ method: 'POST', path: '/search/{index}', inputSchema: own });
    expect(post.schema).toMatchObject({ properties: { index: { type: 'string' }, q: { type: 'string' } } });
    expect(post.schema.required).toEqual(['index']);
    expect(post.grouped.properties).toMatchObject({
      path: { required: ['index'], properties: { index: { type: 'string' } } },
      body: own,
    });
    const get = toolInputSchema({ method: 'GET', path: '/search', inputSchema: own });
    expect(Object.keys(get.schema.properties as object)).toEqual(['q', 'idempotency_key']);
    expect(get.args).toEqual([{ name: 'q', in: 'query', param: 'q' }]);
    expect(get.schema).not.toHaveProperty('required');
    // An array body stays `body`.
    const list = toolInputSchema({ method: 'POST', path: '/batch', inputSchema: { type: 'array', items: {} } });
    expect(list.args).toEqual([{ name: 'body', in: 'body' }]);
  });

  it('without a stored schema (an API made in the console) take any query and, with a body method, any JSON body', () => {
    const post = toolInputSchema({ method: 'POST', path: '/items/{id}' });
    expect(Object.keys(post.schema.properties as object)).toEqual(['id', 'query', 'body', 'idempotency_key']);
    expect(post.schema).toMatchObject({
      required: ['id'],
      additionalProperties: false,
      properties: { id: { type: 'string' }, query: { type: 'object', additionalProperties: {} }, body: {} },
    });
    const get = toolInputSchema({ method: 'GET', path: '/items' });
    expect(Object.keys(get.schema.properties as object)).toEqual(['query', 'idempotency_key']);
    expect(get.args).toEqual([{ name: 'query', in: 'query' }]);
  });

  it('hash the schema, so a changed endpoint schema is noticed', () => {
    const a = toolInputSchema({ method: 'GET', path: '/a' });
    expect(toolInputSchema({ method: 'GET', path: '/a' }).hash).toBe(a.hash);
    expect(toolInputSchema({ method: 'GET', path: '/a/{b}' }).hash).not.toBe(a.hash);
  });
});
