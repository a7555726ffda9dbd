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
  it("take the import's groups (no headers), require every path parameter, and never allow extra arguments", () => {
    const { schema } = toolInputSchema({
      method: 'POST',
      path: '/orders/{id}',
      inputSchema: {
        type: 'object',
        properties: {
          path: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
          query: { type: 'object', properties: { dry: { type: 'boolean' } } },
          header: { type: 'object', properties: { 'x-trace': { type: 'string' } } },
          body: { $ref: '#/$defs/Order' },
        },
        required: ['path', 'body'],
        $defs: { Order: { type: 'object' } },
      },
    });
    expect(Object.keys(schema.properties as object)).toEqual(['path', 'query', 'body', 'idempotency_key']);
    expect(schema).toMatchObject({
      required: ['path', 'body'],
      additionalProperties: false,
      $defs: { Order: { type: 'object' } },
      properties: { path: { properties: { id: { type: 'integer' } }, required: ['id'] } },
    });
  });

  it('treat any other schema as the body (the query for GET) and describe undeclared path parameters', () => {
    const own = { type: 'object', properties: { q: { type: 'string' } } };
    const post = toolInputSchema({ method: 'POST', path: '/search/{index}', inputSchema: own }).schema;
    expect(post.properties).toMatchObject({
      path: { required: ['index'], properties: { index: { type: ['string', 'number'] } } },
      body: own,
    });
    const get = toolInputSchema({ method: 'GET', path: '/search', inputSchema: own }).schema;
    expect(get.properties).toMatchObject({ query: own });
    expect(get.properties).not.toHaveProperty('body');
    expect(get).not.toHaveProperty('required');
  });

  it('hash the schema, so a changed endpoint schema is noticed', () => {
    const a = toolInputSchema({ method: 'GET', path: '/a' });
    expect(toolInputSchema({ method: 'GET', path: '/a' }).hash).toBe(a.hash);
    expect(toolInputSchema({ method: 'GET', path: '/a/{b}' }).hash).not.toBe(a.hash);
  });
});
