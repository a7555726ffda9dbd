// OpenAPI import: endpoints and schemas from 3.0 / 3.1 documents, and every refusal the importer promises.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ValidationError } from '../../core/errors.js';
import {
  MAX_IMPORT_OPERATIONS,
  OpenApiImportError,
  parseOpenApiDocument,
  type ImportedApi,
} from '../../core/providers/openapi-import.js';

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/openapi/${name}`, import.meta.url), 'utf8');

const WEATHER_31_JSON = fixture('weather-3.1.json');
const WEATHER_30_YAML = fixture('weather-3.0.yaml');

/** A minimal valid document around the given paths (and optional components). */
function doc(paths: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { openapi: '3.1.0', info: { title: 'T', version: '1' }, paths, ...extra };
}

const OK_RESPONSE = { '200': { description: 'ok' } };

async function refusal(source: string | object): Promise<OpenApiImportError> {
  const err: unknown = await parseOpenApiDocument(source).then(
    () => new Error('expected a refusal'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenApiImportError);
  return err as OpenApiImportError;
}

const ALERT = {
  type: 'object',
  required: ['id', 'city', 'kind'],
  properties: {
    id: { type: 'string' },
    city: { type: 'string' },
    kind: { type: 'string', enum: ['storm', 'heat', 'frost'] },
    created_at: { type: 'string', format: 'date-time' },
  },
};
const ALERT_ID_PATH = {
  type: 'object',
  properties: { alertId: { type: 'string' } },
  required: ['alertId'],
};

const WEATHER_ENDPOINTS: ImportedApi['endpoints'] = [
  {
    method: 'GET',
    path: '/alerts',
    // No summary: the first non-empty line of the description, trimmed.
    summary: 'List active alerts.',
    operation_id: 'listAlerts',
    input_schema: {
      type: 'object',
      properties: { query: { type: 'object', properties: { region: { type: 'string' } } } },
    },
    // 2XX wins over default.
    output_schema: { type: 'array', items: ALERT },
  },
  {
    method: 'POST',
    path: '/alerts',
    summary: 'Subscribe to severe-weather alerts',
    operation_id: 'createAlert',
    input_schema: {
      type: 'object',
      properties: {
        body: {
          type: 'object',
          required: ['city', 'kind'],
          additionalProperties: false,
          properties: {
            city: { type: 'string' },
            kind: { type: 'string', enum: ['storm', 'heat', 'frost'] },
            threshold: { type: 'number' },
            callback_url: { type: 'string', format: 'uri' },
          },
        },
      },
      required: ['body'],
    },
    // 201 comes before 202 (which is not JSON anyway), whatever the document order.
    output_schema: ALERT,
  },
  {
    method: 'PATCH',
    path: '/alerts/{alertId}',
    summary: "Change an alert's threshold",
    operation_id: 'updateAlert',
    input_schema: {
      type: 'object',
      properties: {
        path: ALERT_ID_PATH,
        // application/merge-patch+json is preferred over text/plain; the body is optional.
        body: { type: 'object', properties: { threshold: { type: 'number' } } },
      },
      required: ['path'],
    },
    output_schema: ALERT,
  },
  {
    method: 'DELETE',
    path: '/alerts/{alertId}',
    summary: null,
    operation_id: null,
    input_schema: { type: 'object', properties: { path: ALERT_ID_PATH }, required: ['path'] },
    output_schema: null,
  },
  {
    method: 'GET',
    path: '/forecast/{city}',
    summary: 'Forecast for a city',
    operation_id: 'getForecast',
    input_schema: {
      type: 'object',
      properties: {
        path: {
          type: 'object',
          properties: { city: { type: 'string', minLength: 1, description: 'City name, e.g. Paris.' } },
          required: ['city'],
        },
        query: {
          type: 'object',
          properties: {
            // The operation's `lang` replaces the path-level one (required, enum, no description).
            lang: { type: 'string', enum: ['en', 'fr', 'de'] },
            days: { type: 'integer', minimum: 1, maximum: 14, default: 3, description: 'Number of days (1-14).' },
            units: { type: 'string', enum: ['metric', 'imperial'], default: 'metric' },
          },
          required: ['lang'],
        },
        // The cookie and the Accept header are not part of the input.
        header: {
          type: 'object',
          properties: { 'X-Request-Id': { type: 'string', format: 'uuid', description: 'Correlation ID.' } },
        },
      },
      required: ['path', 'query'],
    },
    output_schema: {
      type: 'object',
      required: ['city', 'days'],
      properties: {
        city: { type: 'string' },
        units: { type: 'string', enum: ['metric', 'imperial'], default: 'metric' },
        days: {
          type: 'array',
          items: {
            type: 'object',
            required: ['date', 'high', 'low'],
            properties: {
              date: { type: 'string', format: 'date' },
              high: { type: 'number' },
              low: { type: 'number' },
              summary: { type: 'string' },
            },
          },
        },
      },
    },
  },
  {
    method: 'GET',
    path: '/health',
    summary: 'Service health',
    operation_id: 'health',
    input_schema: null,
    // Only a `default` response.
    output_schema: {
      type: 'object',
      required: ['status'],
      properties: { status: { type: 'string', enum: ['ok', 'degraded'] } },
    },
  },
];

const WEATHER_API: Omit<ImportedApi, 'openapi_version'> = {
  title: 'Weather API',
  version: '2.4.0',
  description: 'Forecasts and severe-weather alerts for cities worldwide.',
  servers: ['https://eu.weather.example/v2', 'https://weather.example/v2'],
  endpoints: WEATHER_ENDPOINTS,
};

describe('parseOpenApiDocument: the weather API', () => {
  it('imports OpenAPI 3.1 JSON into exact endpoints with dereferenced schemas', async () => {
    const api = await parseOpenApiDocument(WEATHER_31_JSON);
    expect(api).toEqual({ openapi_version: '3.1.0', ...WEATHER_API });
    // Key order matters to people reading the listing: path, query, header, body.
    expect(Object.keys(api.endpoints[4]!.input_schema!.properties as object)).toEqual(['path', 'query', 'header']);
    expect(JSON.stringify(api)).not.toContain('$ref');
  });

  it('imports the same API written as OpenAPI 3.0 YAML (with aliases) into the same endpoints', async () => {
    const api = await parseOpenApiDocument(WEATHER_30_YAML);
    expect(api).toEqual({ openapi_version: '3.0.3', ...WEATHER_API });
  });

  it('accepts an already-parsed object and does not mutate it', async () => {
    const source = JSON.parse(WEATHER_31_JSON) as Record<string, unknown>;
    const before = structuredClone(source);
    const api = await parseOpenApiDocument(source);
    expect(api.endpoints).toEqual(WEATHER_ENDPOINTS);
    expect(source).toEqual(before);
    expect(JSON.stringify(source)).toContain('"$ref":"#/components/schemas/Forecast"');
  });

  it('returns schemas that do not share objects between endpoints', async () => {
    const api = await parseOpenApiDocument(WEATHER_31_JSON);
    const [postAlerts, patchAlert] = [api.endpoints[1]!, api.endpoints[2]!];
    expect(postAlerts.output_schema).toEqual(patchAlert.output_schema);
    expect(postAlerts.output_schema).not.toBe(patchAlert.output_schema);
  });
});

describe('parseOpenApiDocument: operations and schemas', () => {
  it('truncates long summaries to 200 characters', async () => {
    const api = await parseOpenApiDocument(
      doc({ '/a': { get: { summary: 'x'.repeat(300), responses: OK_RESPONSE } } }),
    );
    expect(api.endpoints[0]!.summary).toHaveLength(200);
    expect(api.endpoints[0]!.summary!.endsWith('…')).toBe(true);
  });

  it('sorts endpoints by path, then in HTTP_METHODS order', async () => {
    const op = { responses: OK_RESPONSE };
    const api = await parseOpenApiDocument(
      doc({ '/b': { delete: op, get: op }, '/a': { options: op, post: op, trace: op }, 'x-note': {} }),
    );
    expect(api.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual(['POST /a', 'OPTIONS /a', 'GET /b', 'DELETE /b']);
  });

  it('uses a non-JSON request body when it is the only one, and ignores non-JSON responses', async () => {
    const api = await parseOpenApiDocument(
      doc({
        '/upload': {
          post: {
            requestBody: { content: { 'application/octet-stream': {} } },
            responses: { '200': { description: 'ok', content: { 'text/csv': { schema: { type: 'string' } } } } },
          },
        },
      }),
    );
    expect(api.endpoints[0]!.input_schema).toEqual({ type: 'object', properties: { body: {} } });
    expect(api.endpoints[0]!.output_schema).toBeNull();
  });

  it('imports a circular schema without hanging: cycles become self-contained $defs', async () => {
    const node = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
      },
    };
    const api = await parseOpenApiDocument(
      doc(
        {
          '/tree': {
            get: {
              responses: {
                '200': {
                  description: 'ok',
                  content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } },
                },
              },
            },
            put: {
              requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } },
              responses: OK_RESPONSE,
            },
          },
        },
        { components: { schemas: { Node: node } } },
      ),
    );
    const selfNode = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        children: { type: 'array', items: { $ref: '#/$defs/Node' } },
      },
    };
    const [get, put] = api.endpoints;
    expect(get!.output_schema).toEqual({ ...selfNode, $defs: { Node: selfNode } });
    expect(put!.input_schema).toEqual({
      type: 'object',
      properties: { body: selfNode },
      $defs: { Node: selfNode },
    });
    expect(() => JSON.stringify(api)).not.toThrow();
    expect(JSON.stringify(api)).not.toContain('#/components/');
  });
});

describe('parseOpenApiDocument: refusals', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('is a 400 validation error named OpenApiImportError', async () => {
    const err = await refusal('{');
    expect(err).toBeInstanceOf(ValidationError);
    expect([err.name, err.status, err.code]).toEqual(['OpenApiImportError', 400, 'validation_failed']);
  });

  it('refuses text that is neither JSON nor YAML', async () => {
    expect((await refusal('{"openapi": "3.1.0", "info": ')).message).toMatch(
      /^The OpenAPI document is not valid JSON: /,
    );
    expect((await refusal('openapi: 3.1.0\ninfo: [unclosed\n')).message).toMatch(
      /^The OpenAPI document is not valid YAML: /,
    );
    expect((await refusal('   ')).message).toBe('The OpenAPI document is empty.');
    expect((await refusal('just a string')).message).toBe('The OpenAPI document must be a JSON or YAML object.');
  });

  it('refuses Swagger 2.0 with a hint to convert it', async () => {
    const err = await refusal(JSON.stringify({ swagger: '2.0', info: { title: 'T', version: '1' }, paths: {} }));
    expect(err.message).toMatch(/^Swagger 2\.0 documents are not supported; convert it to OpenAPI 3/);
  });

  it('refuses documents that are not OpenAPI 3.0 / 3.1', async () => {
    expect((await refusal({ paths: {} })).message).toMatch(/not an OpenAPI document/);
    expect((await refusal({ ...doc({}), openapi: '4.0.0' })).message).toMatch(/Unsupported OpenAPI version "4\.0\.0"/);
  });

  it.each(['3.0.3', '3.1.0'])("refuses an invalid %s document with the validator's first message", async (version) => {
    const noInfo = { openapi: version, paths: { '/a': { get: { responses: OK_RESPONSE } } } };
    const err = await refusal(noInfo);
    expect(err.message).toBe("Invalid OpenAPI document: #/ must have required property 'info'");
    expect(err.details).toMatchObject({ errors: ["#/ must have required property 'info'"] });
  });

  it('refuses a broken local $ref', async () => {
    const broken = doc({
      '/a': {
        get: {
          responses: {
            '200': {
              description: 'ok',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Nope' } } },
            },
          },
        },
      },
    });
    expect((await refusal(broken)).message).toMatch(/^Invalid OpenAPI document: .*#\/components\/schemas\/Nope/);
  });

  it.each([
    ['a relative file', './does-not-exist-7f3a.yaml#/x'],
    ['an absolute file', '/definitely/not/here.json'],
    ['a URL', 'https://evil.example/schema.json'],
  ])('refuses an external $ref to %s without reading or fetching it', async (_what, ref) => {
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const external = doc({
      '/a': {
        get: {
          responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: ref } } } } },
        },
      },
    });
    const err = await refusal(external);
    expect(err.message).toBe(
      `External $ref ${JSON.stringify(ref)} at #/paths/~1a/get/responses/200/content/application~1json/schema ` +
        'is not allowed: only local references ("#/...") are supported. Bundle the document into a single file first.',
    );
    expect(err.message).not.toMatch(/ENOENT/);
    expect(err.details).toEqual({ ref, at: '#/paths/~1a/get/responses/200/content/application~1json/schema' });
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('refuses a document without operations', async () => {
    const message = 'The OpenAPI document has no operations under `paths`; there is nothing to import.';
    expect((await refusal(doc({}))).message).toBe(message);
    expect((await refusal(doc({ '/a': { trace: { responses: OK_RESPONSE } } }))).message).toBe(message);
  });

  it(`refuses more than ${MAX_IMPORT_OPERATIONS} operations, and accepts exactly ${MAX_IMPORT_OPERATIONS}`, async () => {
    const paths = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`/op${i}`, { get: { responses: OK_RESPONSE } }]));
    const err = await refusal(doc(paths(MAX_IMPORT_OPERATIONS + 1)));
    expect(err.message).toBe('The OpenAPI document has 501 operations; at most 500 can be imported.');
    expect((await parseOpenApiDocument(doc(paths(MAX_IMPORT_OPERATIONS)))).endpoints).toHaveLength(500);
  });

  it('refuses a YAML alias bomb quickly', async () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      levels.push(`${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const bomb = `openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths: {}\nx-bomb:\n${levels.map((l) => `  ${l}`).join('\n')}\n`;
    const started = Date.now();
    expect((await refusal(bomb)).message).toMatch(/larger than 5242880 bytes/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('refuses a $ref bomb (schemas that expand exponentially) quickly', async () => {
    const schemas: Record<string, unknown> = { S0: { type: 'string' } };
    for (let i = 1; i <= 40; i++) {
      const ref = { $ref: `#/components/schemas/S${i - 1}` };
      schemas[`S${i}`] = { type: 'object', properties: { a: ref, b: ref } };
    }
    const bomb = doc(
      {
        '/a': {
          get: {
            responses: {
              '200': {
                description: 'ok',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/S40' } } },
              },
            },
          },
        },
      },
      { openapi: '3.0.3', components: { schemas } },
    );
    const started = Date.now();
    expect((await refusal(bomb)).message).toBe(
      'The output schema of GET /a expands to more than 1048576 bytes once $refs are inlined; simplify the document.',
    );
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('refuses a cyclic caller object instead of looping', async () => {
    const cyclic = doc({ '/a': { get: { responses: OK_RESPONSE } } });
    (cyclic.info as Record<string, unknown>).self = cyclic;
    expect((await refusal(cyclic)).message).toBe('The OpenAPI document contains a circular object reference.');
  });
});
