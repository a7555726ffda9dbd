// The OpenAPI export turns whatever schemas a listing stores (a provider's inline JSON, JSON Schema 2020-12 from a 3.1
// import) into a document that validates as OpenAPI 3.0: each conversion is checked, and a hostile mix still parses.
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { exportOpenApi } from '../../core/catalog/listings/openapi-export.js';
import type { IApi, IEndpoint } from '../../db/entities/index.js';

const api = {
  slug: 'weather',
  name: 'Weather',
  summary: 'Forecasts',
  description: null,
  docsUrl: 'https://weather.example/docs',
  source: 'provider',
  updatedAt: new Date('2026-11-23T00:00:00Z'),
} as Pick<IApi, 'slug' | 'name' | 'summary' | 'description' | 'docsUrl' | 'source' | 'updatedAt'>;

let n = 0;
function endpoint(method: string, path: string, input: unknown, output: unknown, operationId?: string): IEndpoint {
  return {
    id: `ep_${++n}`,
    method,
    path,
    summary: null,
    operationId: operationId ?? null,
    inputSchema: input,
    outputSchema: output,
    priceCents: 1,
  } as unknown as IEndpoint;
}

function doc(endpoints: IEndpoint[]) {
  return exportOpenApi({ api, endpoints, gatewayUrl: 'https://gw.example', prices: new Map() }) as any;
}

async function expectValid(d: unknown) {
  const validated = (await SwaggerParser.validate(structuredClone(d) as never)) as { openapi: string };
  expect(validated.openapi).toBe('3.0.3');
}

describe('OpenAPI 3.0 export', () => {
  it('converts 2020-12 forms to 3.0 and rewrites $defs references to components', async () => {
    const input = {
      type: 'object',
      properties: {
        path: { type: 'object', properties: { id: { type: 'integer', exclusiveMinimum: 0 } }, required: ['id'] },
        query: {
          type: 'object',
          properties: {
            q: { type: ['string', 'null'], examples: ['paris'] },
            mode: { const: 'fast' },
            n: { type: ['integer', 'string'] },
          },
          required: ['q'],
        },
        body: { $ref: '#/$defs/Node' },
      },
      required: ['path', 'body'],
      $defs: { Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' }, tags: { type: 'array' } } } },
    };
    const d = doc([endpoint('POST', '/things/{id}', input, { type: 'object', properties: { ok: true } })]);
    await expectValid(d);
    const op = d.paths['/things/{id}'].post;
    expect(op.parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 0, exclusiveMinimum: true } },
      { name: 'q', in: 'query', required: true, schema: { type: 'string', nullable: true, example: 'paris' } },
      { name: 'mode', in: 'query', schema: { enum: ['fast'] } },
      { name: 'n', in: 'query', schema: { anyOf: [{ type: 'integer' }, { type: 'string' }] } },
    ]);
    const ref = op.requestBody.content['application/json'].schema.$ref as string;
    expect(op.requestBody.required).toBe(true);
    const node = d.components.schemas[ref.split('/').pop()!];
    expect(node.properties.next).toEqual({ $ref: ref });
    expect(node.properties.tags).toEqual({ type: 'array', items: {} });
    expect(op.responses['200'].content['application/json'].schema.properties.data).toEqual({
      type: 'object',
      properties: { ok: {} },
    });
  });

  it('adds a string path parameter the schema forgot, drops unresolvable references and invalid keywords', async () => {
    const input = {
      type: 'object',
      properties: {
        query: {
          type: 'object',
          properties: {
            a: { $ref: 'https://evil.example/schema.json' },
            b: { $ref: '#/definitions/Missing', description: 'kept' },
            c: { type: 42, pattern: '([', maxLength: -1, minimum: 'x', enum: [], required: [], items: [1, 2] },
            d: { type: 'null' },
            e: false,
          },
        },
        header: { type: 'object', properties: { Authorization: { type: 'string' }, 'X-Trace': { type: 'string' } } },
      },
    };
    const d = doc([
      endpoint('GET', '/u/{user}/p/{post}', input, 'not a schema', 'dup'),
      endpoint('GET', '/other', null, null, 'dup'),
      endpoint('HEAD', '/other', { properties: 5 }, [], 'bad id with spaces'),
    ]);
    await expectValid(d);
    const op = d.paths['/u/{user}/p/{post}'].get;
    const byName = Object.fromEntries(op.parameters.map((p: { name: string }) => [p.name, p]));
    expect(byName.user).toEqual({ name: 'user', in: 'path', required: true, schema: { type: 'string' } });
    expect(byName.post).toMatchObject({ in: 'path', required: true });
    expect(byName.a.schema).toEqual({});
    expect(byName.b.schema).toEqual({ description: 'kept' });
    expect(byName.Authorization).toBeUndefined();
    expect(byName['X-Trace']).toMatchObject({ in: 'header' });
    expect(JSON.stringify(d)).not.toContain('evil.example');
    const ids = [op.operationId, d.paths['/other'].get.operationId, d.paths['/other'].head.operationId];
    expect(new Set(ids).size).toBe(3);
  });

  it('a listing without endpoints is a valid document with no paths; servers and security are the gateway’s', async () => {
    const d = doc([]);
    await expectValid(d);
    expect(d.paths).toEqual({});
    expect(d.servers[0].url).toBe('https://gw.example/v1/proxy/weather');
    expect(d.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});
