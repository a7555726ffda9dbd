import { describe, expect, it } from 'vitest';
import { forwardRequestHeaders, forwardResponseHeaders } from '../../gateway/forward-headers.js';
import { toGatewayError, UpstreamCallError, UpstreamRateLimitedError } from '../../gateway/upstream-client.js';

describe('forwardRequestHeaders', () => {
  const dropped = [
    'connection',
    'keep-alive',
    'proxy-authenticate',
    'proxy-authorization',
    'proxy-connection',
    'te',
    'trailer',
    'trailers',
    'transfer-encoding',
    'upgrade',
    'http2-settings',
    'host',
    'content-length',
    'expect',
    'authorization',
    'cookie',
    'idempotency-key',
    'x-idempotency-key',
    'x-request-id',
    'accept-encoding',
    'if-none-match',
    'if-modified-since',
    ':authority',
  ];

  it.each(dropped)('drops %s', (name) => {
    expect(forwardRequestHeaders({ [name]: 'v', 'x-kept': 'k' })).toEqual({ 'x-kept': 'k' });
  });

  it('keeps everything else as it came', () => {
    const headers = {
      'content-type': 'application/json; charset=utf-8',
      accept: 'application/json',
      'accept-language': 'en',
      'user-agent': 'agent/1.0',
      'x-custom': 'one, two',
      'if-match': '"abc"',
      range: 'bytes=0-99',
    };
    expect(forwardRequestHeaders(headers)).toEqual(headers);
  });

  it('drops the headers that Connection names, whatever their case and spacing', () => {
    expect(
      forwardRequestHeaders({
        connection: 'Keep-Alive ,  X-Hop-One,x-hop-two',
        'x-hop-one': '1',
        'x-hop-two': '2',
        'x-kept': 'k',
      }),
    ).toEqual({ 'x-kept': 'k' });
    expect(forwardRequestHeaders({ connection: 'keep-alive', 'keep-alive': 'timeout=5', 'x-kept': 'k' })).toEqual({
      'x-kept': 'k',
    });
  });

  it('joins repeated headers node kept as arrays and skips undefined values', () => {
    expect(forwardRequestHeaders({ 'set-cookie': ['a=1', 'b=2'], 'x-absent': undefined })).toEqual({
      'set-cookie': 'a=1, b=2',
    });
  });

  it('returns a new object and leaves the input alone', () => {
    const incoming = { authorization: 'Bearer x', accept: '*/*' };
    const out = forwardRequestHeaders(incoming);
    out.accept = 'changed';
    expect(incoming).toEqual({ authorization: 'Bearer x', accept: '*/*' });
  });
});

describe('forwardResponseHeaders', () => {
  it('drops hop-by-hop, framing and cookies, keeps the rest (arrays included)', () => {
    expect(
      forwardResponseHeaders({
        connection: 'keep-alive, x-hop',
        'keep-alive': 'timeout=5',
        'x-hop': '1',
        'transfer-encoding': 'chunked',
        'content-length': '10',
        'set-cookie': ['a=1', 'b=2'],
        'content-type': 'application/json',
        'retry-after': '5',
        link: ['<a>; rel=next', '<b>; rel=prev'],
        'x-absent': undefined,
      }),
    ).toEqual({
      'content-type': 'application/json',
      'retry-after': '5',
      link: ['<a>; rel=next', '<b>; rel=prev'],
    });
  });
});

describe('toGatewayError', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it.each([200, 201, 204, 206, 299])('is undefined for %i', (status) => {
    expect(toGatewayError({ status, headers: {} })).toBeUndefined();
  });

  it.each([301, 302, 304, 400, 401, 404, 418, 500, 502, 503])('maps %i to upstream_error 502', (status) => {
    const err = toGatewayError({ status, headers: {} });
    expect(err).toBeInstanceOf(UpstreamCallError);
    expect([err!.status, err!.code]).toEqual([502, 'upstream_error']);
    expect(err!.details).toEqual({ reason: 'bad_status', upstream_status: status });
    expect(err!.headers).toBeUndefined();
    if (status < 400) expect(err!.message).toMatch(/redirects are not followed/);
  });

  it.each([
    ['7', '7', 7],
    ['0', '0', 0],
    [' 120 ', '120', 120],
    ['Thu, 01 Jan 2026 00:00:30 GMT', 'Thu, 01 Jan 2026 00:00:30 GMT', 30],
    ['Wed, 31 Dec 2025 23:59:00 GMT', 'Wed, 31 Dec 2025 23:59:00 GMT', 0],
  ])('maps 429 with Retry-After %j to upstream_rate_limited, passing it on', (raw, header, seconds) => {
    const err = toGatewayError({ status: 429, headers: { 'retry-after': raw } }, now);
    expect(err).toBeInstanceOf(UpstreamRateLimitedError);
    expect([err!.status, err!.code]).toEqual([429, 'upstream_rate_limited']);
    expect(err!.headers).toEqual({ 'Retry-After': header });
    expect(err!.details).toEqual({ upstream_status: 429, retry_after_seconds: seconds });
    expect(err!.retryable).toBe(true);
  });

  it.each([undefined, '', 'soon', '-5', '1.5'])('maps 429 with Retry-After %j to no header at all', (raw) => {
    const err = toGatewayError({ status: 429, headers: { 'retry-after': raw } }, now);
    expect(err!.code).toBe('upstream_rate_limited');
    expect(err!.headers).toBeUndefined();
    expect(err!.details).toEqual({ upstream_status: 429 });
  });
});

describe('UpstreamCallError', () => {
  it('carries the reason and, when known, the upstream status in details', () => {
    const err = new UpstreamCallError('timeout', 'slow', { upstreamStatus: 200, details: { limit_bytes: 1 } });
    expect([err.status, err.code, err.kind, err.reason, err.upstreamStatus]).toEqual([
      502,
      'upstream_error',
      'upstream_error',
      'timeout',
      200,
    ]);
    expect(err.details).toEqual({ limit_bytes: 1, reason: 'timeout', upstream_status: 200 });
    expect(new UpstreamCallError('reset', 'x').details).toEqual({ reason: 'reset' });
  });
});
