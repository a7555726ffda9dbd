// The OpenAPI 3.1.0 document of the control plane and the gateway: it validates (swagger-parser), lints clean with
// Redocly's recommended rules (no error, no warning), and lists every route of the spec's tables.
import SwaggerParser from '@apidevtools/swagger-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, DOCUMENT_VERSION, OPENAPI_VERSION } from '../../api/openapi/document.js';

/**
 * The route tables of the spec (marketplace-spec.md, "Endpoints"), copied here so the test does not depend on a file
 * outside the repository. The provider table's elided tails are written out in full; the gateway's
 * `ALL /v1/proxy/{apiSlug}/{path}` is checked method by method below.
 */
const SPEC_ROUTES = [
  'POST /v1/register',
  'POST /v1/signup',
  'POST /v1/auth/signup',
  'POST /v1/auth/login/request',
  'POST /v1/auth/login/verify',
  'POST /v1/auth/verify-email',
  'POST /v1/auth/logout',
  'GET /health',
  'GET /v1/me',
  'GET /v1/search',
  'GET /v1/categories',
  'GET /v1/providers',
  'GET /v1/providers/{slug}',
  'GET /v1/apis/{slug}',
  'GET /v1/apis/{slug}/schema',
  'GET /v1/apis/{slug}/openapi',
  'GET /v1/apis/{slug}/endpoints',
  'GET /v1/apis/{slug}/stats',
  'GET /v1/apis/{slug}/history',
  'GET /v1/apis/{slug}/ranks',
  'GET /v1/leaderboards/{board}',
  'GET /v1/market/overview',
  'GET /v1/market/activity',
  'GET /v1/me/profile',
  'PATCH /v1/me/profile',
  'POST /v1/me/avatar',
  'GET /v1/keys',
  'POST /v1/keys',
  'PATCH /v1/keys/{id}',
  'DELETE /v1/keys/{id}',
  'GET /v1/usage',
  'GET /v1/billing/balance',
  'GET /v1/billing/packs',
  'POST /v1/billing/checkout',
  'POST /v1/billing/setup-intent',
  'POST /v1/billing/portal',
  'POST /v1/billing/auto-reload',
  'GET /v1/provider/apis',
  'POST /v1/provider/apis',
  'GET /v1/provider/analytics',
  'GET /v1/provider/documents',
  'POST /v1/provider/documents',
  'POST /v1/provider/apis/{api_id}/verify',
  'POST /v1/provider/apis/{api_id}/publish',
  'POST /v1/provider/apis/{api_id}/unpublish',
  'PATCH /v1/provider/apis/{api_id}/pricing',
  'POST /v1/provider/connect/onboard',
  'POST /v1/provider/documents/{document_id}/activate',
  'POST /v1/provider/apis/{api_id}/terms/accept',
  'GET /v1/apis/{slug}/terms',
  'POST /v1/apis/{slug}/terms/accept',
];

const PROXY_METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];

describe('the OpenAPI document', () => {
  const doc = buildOpenApiDocument() as any;

  it('is OpenAPI 3.1.0, version 1.0.0', () => {
    expect(doc.openapi).toBe(OPENAPI_VERSION);
    expect(OPENAPI_VERSION).toBe('3.1.0');
    expect(doc.info.version).toBe(DOCUMENT_VERSION);
    expect(DOCUMENT_VERSION).toBe('1.0.0');
  });

  it('validates with swagger-parser', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeDefined();
  });

  it("lints clean with Redocly's recommended rules (no error, no warning)", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config });
    const lines = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`);
    expect(lines).toEqual([]);
  });

  it("lists every route of the spec's tables", () => {
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    expect(SPEC_ROUTES.filter((r) => !documented.has(r))).toEqual([]);
    const proxy = doc.paths['/v1/proxy/{apiSlug}/{path}'];
    expect(PROXY_METHODS.filter((m) => !proxy[m])).toEqual([]);
    expect(proxy.servers[0].url).toBe('{gateway_url}');
  });

  it('derives request schemas from the zod schemas the routes parse with', () => {
    const createKey = doc.paths['/v1/keys'].post;
    const body = createKey.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['name']);
    expect(body.additionalProperties).toBe(false);
    const limit = doc.paths['/v1/search'].get.parameters.find((p: any) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', maximum: 500 } });
  });

  it('documents the search totals rule: total_exact in meta, the result window and its 400 (issue 33)', () => {
    const search = doc.paths['/v1/search'].get;
    const meta = search.responses['200'].content['application/json'].schema.properties.meta;
    expect(meta.required).toEqual(expect.arrayContaining(['total', 'total_exact', 'limit', 'offset', 'sort']));
    expect(meta.properties.total_exact).toMatchObject({ type: 'boolean' });
    expect(meta.properties.total.description).toMatch(/at least this many \(10000/);
    expect(search.description).toMatch(/exact up to 10000 results/);
    expect(search.description).toMatch(/`offset \+ limit` above 10000 answers 400 `validation_failed`/);
    expect(search.responses['400'].$ref).toBe('#/components/responses/Error400');
  });

  it('declares the security schemes, per-operation security and scopes', () => {
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['bearerKey', 'session', 'sessionCookie']);
    const createKey = doc.paths['/v1/keys'].post;
    expect(createKey.security).toEqual([{ bearerKey: ['keys:write'] }, { session: ['keys:write'] }]);
    expect(createKey['x-scopes']).toEqual(['keys:write']);
    expect(doc.paths['/v1/apis/{slug}/terms/accept'].post.security).toEqual([{ session: [] }]);
    expect(doc.paths['/v1/proxy/{apiSlug}/{path}'].post.security).toEqual([{ bearerKey: ['proxy:call'] }]);
    expect(doc.paths['/v1/search'].get.security).toEqual([]);
  });

  it('documents error responses per status with the codes of core/errors.ts', () => {
    const err402 = doc.components.responses.Error402.content['application/json'].schema;
    expect(err402.properties.error.properties.code.enum.sort()).toEqual([
      'daily_cap_exceeded',
      'insufficient_budget',
      'payment_required',
      'per_call_limit_exceeded',
    ]);
    expect(doc.paths['/v1/proxy/{apiSlug}/{path}'].get.responses['428'].$ref).toBe('#/components/responses/Error428');
  });
});
