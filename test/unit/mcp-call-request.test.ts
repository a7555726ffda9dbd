// How call_api and run_probe turn their arguments into the gateway request they dispatch in process.
import { describe, expect, it } from 'vitest';
import { gatewayRequest } from '../../mcp/tools/calls.tools.js';

describe('call_api request building', () => {
  it("GET: input becomes query parameters, merged with the endpoint's own query", () => {
    expect(
      gatewayRequest({ slug: 'wx', endpoint: '/f', method: 'GET', input: { city: 'São Paulo', days: 3 } }),
    ).toEqual({ target: '/v1/proxy/wx/f?city=S%C3%A3o+Paulo&days=3', headers: {} });
    expect(gatewayRequest({ slug: 'wx', endpoint: '/f?a=1', method: 'GET', input: { b: [true, null] } }).target).toBe(
      '/v1/proxy/wx/f?a=1&b=true&b=',
    );
    expect(gatewayRequest({ slug: 'wx', endpoint: '/f?', method: 'HEAD', input: { b: 2 } }).target).toBe(
      '/v1/proxy/wx/f?b=2',
    );
    expect(gatewayRequest({ slug: 'wx', endpoint: '/f', method: 'GET' })).toEqual({
      target: '/v1/proxy/wx/f',
      headers: {},
    });
  });

  it('GET: refuses input that is not a flat object of scalars', () => {
    expect(() => gatewayRequest({ slug: 'wx', endpoint: '/f', method: 'GET', input: 'x' })).toThrow(/object of query/);
    expect(() => gatewayRequest({ slug: 'wx', endpoint: '/f', method: 'GET', input: { a: { b: 1 } } })).toThrow(
      /Query parameter "a"/,
    );
  });

  it('other methods: input is the JSON body; the idempotency key is a header', () => {
    const req = gatewayRequest({ slug: 'wx', endpoint: '/o', method: 'POST', input: [1], idempotency_key: 'k-1' });
    expect(req.target).toBe('/v1/proxy/wx/o');
    expect(req.headers).toEqual({ 'idempotency-key': 'k-1', 'content-type': 'application/json' });
    expect(req.body?.toString()).toBe('[1]');
    expect(gatewayRequest({ slug: 'wx', endpoint: '/o', method: 'DELETE' })).toEqual({
      target: '/v1/proxy/wx/o',
      headers: {},
    });
  });

  it('percent-encodes what may not appear raw on a request line, and the slug', () => {
    expect(gatewayRequest({ slug: 'a b', endpoint: '/q/AC ME/ü?x=é', method: 'GET' }).target).toBe(
      '/v1/proxy/a%20b/q/AC%20ME/%C3%BC?x=%C3%A9',
    );
  });
});
