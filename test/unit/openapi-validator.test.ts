// The response-validation hook that http() runs on every integration-test response: a response that matches the
// document passes; a deliberately broken one (wrong field type, missing field, undocumented status or media type,
// a wrong error code) fails with a message naming the operation; paths the document does not describe are skipped.
import { describe, expect, it } from 'vitest';
import { documentValidator, OpenApiMismatchError, type ResponseSample } from '../helpers/openapi-validator.js';

const key = {
  id: 'key_01',
  name: 'k',
  keyPrefix: 'svc_live_abcd',
  scopes: ['catalog:read'],
  source: 'api',
  parent_key_id: null,
  budget_cents: null,
  per_call_max_cents: null,
  daily_cap_cents: null,
  approval_mode: false,
  approved_cents: 0,
  remaining_approval_cents: null,
  spent_cents: 0,
  spent_today_cents: 0,
  remaining_budget_cents: null,
  created_at: '2026-11-25T00:00:00.000Z',
  last_used_at: null,
  revoked_at: null,
};
const meta = { request_id: 'req_1', pagination: { limit: 50, offset: 0, total: 1, has_more: false } };

const sample = (over: Partial<ResponseSample>): ResponseSample => ({
  method: 'GET',
  path: '/v1/keys',
  status: 200,
  contentType: 'application/json; charset=utf-8',
  body: { ok: true, data: [key], meta },
  ...over,
});

describe('the OpenAPI response-validation hook', () => {
  const validator = documentValidator();

  it('passes a response that matches the document', () => {
    expect(() => validator.validate(sample({}))).not.toThrow();
    expect(() =>
      validator.validate(
        sample({
          status: 401,
          body: { ok: false, error: { code: 'unauthenticated', message: 'no' }, meta: { request_id: 'r' } },
        }),
      ),
    ).not.toThrow();
  });

  it('fails a body whose field has the wrong type, naming the operation and the field', () => {
    const broken = sample({ body: { ok: true, data: [{ ...key, spent_cents: '12' }], meta } });
    expect(() => validator.validate(broken)).toThrow(OpenApiMismatchError);
    expect(() => validator.validate(broken)).toThrow(
      /GET \/v1\/keys → 200[\s\S]*\/data\/0\/spent_cents must be integer/,
    );
  });

  it('fails a body that lacks a field or leaves the envelope', () => {
    const { api_key: _, ...noKey } = { ...key, api_key: 'svc_live_x' };
    const created = sample({ method: 'POST', status: 201, body: { ok: true, data: noKey, meta: { request_id: 'r' } } });
    expect(() => validator.validate(created)).toThrow(/must have required property 'api_key'/);
    expect(() => validator.validate(sample({ body: [key] }))).toThrow(OpenApiMismatchError);
  });

  it('fails an undocumented status, an undocumented media type and a code its status does not have', () => {
    expect(() => validator.validate(sample({ status: 418 }))).toThrow(
      /status 418 is not documented for GET \/v1\/keys/,
    );
    expect(() => validator.validate(sample({ contentType: 'text/html' }))).toThrow(/content type "text\/html"/);
    const wrongCode = { ok: false, error: { code: 'not_found', message: 'x' }, meta: { request_id: 'r' } };
    expect(() => validator.validate(sample({ status: 401, body: wrongCode }))).toThrow(OpenApiMismatchError);
  });

  it('matches the gateway proxy path with slashes in {path}, and checks the envelope there too', () => {
    const ok = { ok: true, data: { tide: 1.2 }, meta: { request_id: 'r', cost_cents: 3, billable_cents: 3 } };
    const path = '/v1/proxy/tides/v2/harbours/brest';
    expect(validator.match(path)).toBe('/v1/proxy/{apiSlug}/{path}');
    expect(() => validator.validate(sample({ path, body: ok }))).not.toThrow();
    expect(() => validator.validate(sample({ path, body: { tide: 1.2 } }))).toThrow(OpenApiMismatchError);
    expect(() => validator.validate(sample({ path, body: { ...ok, meta: { ...ok.meta, cost_cents: 'x' } } }))).toThrow(
      /cost_cents/,
    );
  });

  it('skips paths the document does not describe, and checks a refused method against the failure envelope', () => {
    expect(validator.match('/upstream/anything')).toBeUndefined();
    expect(() => validator.validate(sample({ path: '/mcp', status: 418, body: 'x' }))).not.toThrow();
    const refused = { ok: false, error: { code: 'method_not_allowed', message: 'x' }, meta: { request_id: 'r' } };
    expect(() => validator.validate(sample({ method: 'PUT', status: 405, body: refused }))).not.toThrow();
    expect(() => validator.validate(sample({ method: 'PUT', status: 200 }))).toThrow(/PUT \/v1\/keys is not in the/);
  });

  it('prefers literal segments over parameters', () => {
    expect(validator.match('/docs/assets/init.js')).toBe('/docs/assets/{file}');
    expect(validator.match('/docs/README.md')).toBe('/docs/{file}');
    expect(validator.match('/v1/apis/weather/terms/accept')).toBe('/v1/apis/{slug}/terms/accept');
  });
});
