// OpenAPI import over generated documents (fast-check; docs/testing-properties.md; the generators are in
// test/helpers/property-openapi.ts): valid-ish 3.0/3.1 documents and broken ones (missing fields, wrong types, unknown
// versions, dangling, external and cyclic $refs, odd unicode, deep and wide structures, alias and $ref bombs, plain
// garbage). Whatever the document, the importer (core/providers/openapi-import.ts) either returns a well-formed
// draft or refuses with a 4xx `validation_failed` (OpenApiImportError), and finishes within a time bound; through the
// real route (POST /v1/provider/apis with `import_from.type: openapi_url`, the document served by a loopback server)
// the answer is a 201 or a 4xx in the envelope, never a 5xx, never a hang.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import type { AppError } from '../../../core/errors.js';
import { checkJson } from '../../../core/input.js';
import {
  HTTP_METHODS,
  MAX_IMPORT_OPERATIONS,
  OpenApiImportError,
  parseOpenApiDocument,
  type ImportedApi,
} from '../../../core/providers/openapi-import.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { http, serve } from '../../helpers/http.js';
import { generatedImport, type GeneratedImport } from '../../helpers/property-openapi.js';
import { propertyParameters, propertyTimeout } from '../../helpers/property-runs.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { closeAll } from '../../helpers/fixtures.js';

const PARSER_RUNS = 150;
const ROUTE_RUNS = 40;
/** No import may take longer (the parser's own guard is 5 s; a hang blows through it). */
const IMPORT_BOUND_MS = 8_000;

/** Cases found by these properties, always run first (regressions): a lone surrogate in a schema was a 500. */
const FOUND: [GeneratedImport][] = [
  [
    {
      kind: 'lone surrogate in a schema description',
      source: {
        openapi: '3.0.0',
        info: { title: 't', version: '1' },
        paths: {
          '/a': {
            get: {
              responses: {
                '200': {
                  description: 'ok',
                  content: { 'application/json': { schema: { type: 'object', description: '\ud800' } } },
                },
              },
            },
          },
        },
      },
    },
  ],
  [
    {
      kind: 'NUL in a summary',
      source:
        '{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"summary":"a\\u0000b","responses":{"200":{"description":"ok"}}}}}}',
    },
  ],
];

/** A draft the importer returned is well formed: what the listing is built from. */
function checkDraft(api: ImportedApi): void {
  expect(api.endpoints.length).toBeGreaterThan(0);
  expect(api.endpoints.length).toBeLessThanOrEqual(MAX_IMPORT_OPERATIONS);
  expect(api.openapi_version).toMatch(/^3\.[01]\.\d+$/);
  for (const e of api.endpoints) {
    expect(HTTP_METHODS).toContain(e.method);
    expect(typeof e.path).toBe('string');
    if (e.summary !== null) expect(e.summary.length).toBeLessThanOrEqual(200);
    for (const s of [e.input_schema, e.output_schema]) if (s !== null) expect(typeof s).toBe('object');
  }
  // A draft is stored in Postgres as text and jsonb: it serialises (no cycles left), and every key and string obeys
  // the input rule (no NUL, no lone surrogate; Postgres refuses both in jsonb: a 500 before the rule was applied).
  expect(() => JSON.stringify(api)).not.toThrow();
  expect(() => checkJson(api, 'draft')).not.toThrow();
}

describe('property: OpenAPI import over generated documents', () => {
  const stats = { drafts: 0, refused: 0, slowestMs: 0 };
  afterAll(() => console.log(`property-openapi (parser): ${JSON.stringify(stats)}`));

  it(
    'the parser returns a well-formed draft or an OpenApiImportError (4xx), in bounded time',
    async () => {
      await fc.assert(
        fc.asyncProperty(generatedImport, async ({ kind, source }) => {
          const started = performance.now();
          let outcome: unknown;
          try {
            outcome = await parseOpenApiDocument(source);
          } catch (err) {
            outcome = err;
          }
          const ms = performance.now() - started;
          stats.slowestMs = Math.max(stats.slowestMs, Math.round(ms));
          expect(ms, `${kind} took ${ms} ms`).toBeLessThan(IMPORT_BOUND_MS);
          if (outcome instanceof Error) {
            expect(outcome, `${kind}: ${outcome.stack ?? String(outcome)}`).toBeInstanceOf(OpenApiImportError);
            const status = (outcome as AppError).status;
            expect(status >= 400 && status < 500).toBe(true);
            expect((outcome as AppError).code).toBe('validation_failed');
            stats.refused += 1;
          } else {
            checkDraft(outcome as ImportedApi);
            stats.drafts += 1;
          }
        }),
        { ...propertyParameters<[GeneratedImport]>(PARSER_RUNS), examples: FOUND },
      );
    },
    propertyTimeout(PARSER_RUNS, 120_000),
  );
});

describe('property: provider import from openapi_url over generated documents', () => {
  let stack: TestStack;
  let app: RunningHttpServer;
  let upstream: Upstream;
  let provider: Person;
  let served = '';
  const stats = { created: 0, refused: 0, slowestMs: 0 };

  beforeAll(async () => {
    upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(served);
    });
    stack = await createTestStack();
    app = await serve(createApiApp(stack.services).callback());
    provider = await createPerson(stack.services);
  });
  afterAll(async () => {
    console.log(`property-openapi (route): ${JSON.stringify(stats)}`);
    await closeAll(app, stack, upstream);
  });

  let n = 0;
  it(
    'POST /v1/provider/apis answers 201 or a 4xx envelope, never a 5xx, within the bound',
    async () => {
      await fc.assert(
        fc.asyncProperty(generatedImport, async ({ kind, source }) => {
          served = typeof source === 'string' ? source : JSON.stringify(source);
          const started = performance.now();
          const res = await http(app.url, 'POST', '/v1/provider/apis', {
            token: provider.session,
            body: {
              name: 'Generated',
              slug: `gen-${++n}-${Date.now().toString(36)}`,
              summary: 'generated by a property test',
              base_url: `${upstream.url}/v1`,
              import_from: { type: 'openapi_url', url: `${upstream.url}/openapi.json` },
            },
          });
          const ms = performance.now() - started;
          stats.slowestMs = Math.max(stats.slowestMs, Math.round(ms));
          expect(ms, `${kind} took ${ms} ms`).toBeLessThan(IMPORT_BOUND_MS + 2_000);
          expect(res.status, `${kind}: ${res.status} ${res.text.slice(0, 500)}`).toBeLessThan(500);
          if (res.status === 201) {
            expect(res.body.ok).toBe(true);
            stats.created += 1;
          } else {
            expect(res.status).toBeGreaterThanOrEqual(400);
            expect(res.body).toMatchObject({
              ok: false,
              error: { code: expect.any(String), message: expect.any(String) },
            });
            stats.refused += 1;
          }
        }),
        { ...propertyParameters<[GeneratedImport]>(ROUTE_RUNS), examples: FOUND },
      );
    },
    propertyTimeout(ROUTE_RUNS, 120_000),
  );
});
