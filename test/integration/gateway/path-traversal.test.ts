// Path traversal through templated endpoints (issue 10), against real Postgres, Redis and a recording loopback
// upstream: no path leaves its endpoint; every traversal form is refused before any spend or upstream call.
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { unsafePathReason } from '../../../gateway/upstream-path.js';
import { expectReconciled } from '../../helpers/books.js';
import { ORDERS_API, useGatewayStack } from '../../helpers/gateway-stack.js';

/** A request sent with its path exactly as written (fetch would resolve dot segments before sending). */
function rawRequest(
  baseUrl: string,
  path: string,
  token: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'GET',
        headers: { authorization: `Bearer ${token}`, ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // keep the text
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('path traversal through templated endpoints', () => {
  const g = useGatewayStack(ORDERS_API, expectReconciled);

  const ATTACKS = [
    '/items/..',
    '/items/.',
    '/items/../../admin',
    '/items/%2e%2e',
    '/items/%2E%2e',
    '/items/%2e',
    '/items/.%2E',
    '/items/%252e%252e',
    '/items/%25252E%25252E',
    '/items/..%2f..%2fadmin',
    '/items/..%2F..%2Fadmin',
    '/items/%2e%2e%2fadmin',
    '/items/a%2fb',
    '/items/a%252Fb',
    '/items/..\\..\\admin',
    '/items/x\\..\\..\\admin',
    '/items/%5c..%5cadmin',
    '/items/%5C',
    '/items/%255c',
    '/items/1/parts/..',
    '/items/1/parts/%2e%2e%2f%2e%2e%2fadmin',
    '/items/%2e%2e/parts/x',
  ];

  it.each(ATTACKS)('refuses %s with 400 before any spend or upstream call', async (attack) => {
    const c = await g.consumer(10);
    const seenBefore = g.upstream.seen.length;
    const res = await rawRequest(g.server.url, `/v1/proxy/${g.api.slug}${attack}`, c.apiKey);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    expect(g.upstream.seen.length).toBe(seenBefore);
    expect(await g.balance(c.orgId)).toBe(10);
    expect(await g.debits(c.orgId)).toBe(0);
  });

  it('still serves ordinary and encoded-but-harmless parameters, at exactly the template expansion', async () => {
    const c = await g.consumer(10);
    const seenBefore = g.upstream.seen.length;
    for (const id of ['42', 'a.b', '..a', 'v1.2.3', 'caf%C3%A9', '%2e%2e%2e', 'x%20y']) {
      const res = await rawRequest(g.server.url, `/v1/proxy/${g.api.slug}/items/${id}?q=..%2f`, c.apiKey);
      expect(res.status, `${id}: ${JSON.stringify(res.body)}`).toBe(200);
    }
    const paths = g.upstream.seen.slice(seenBefore).map((s) => s.url);
    expect(paths).toEqual([
      '/api/v2/items/42?q=..%2f',
      '/api/v2/items/a.b?q=..%2f',
      '/api/v2/items/..a?q=..%2f',
      '/api/v2/items/v1.2.3?q=..%2f',
      '/api/v2/items/caf%C3%A9?q=..%2f',
      '/api/v2/items/%2e%2e%2e?q=..%2f',
      '/api/v2/items/x%20y?q=..%2f',
    ]);
    // Every request the upstream ever saw in this file stayed under the listing's templates.
    expect(g.upstream.seen.every((s) => /^\/api\/v2\/(items\/[^/]+(\/parts\/[^/]+)?|orders)(\?|$)/.test(s.url))).toBe(
      true,
    );
  });

  it('the rule itself: dot segments, separators and backslashes, however often encoded', () => {
    expect(unsafePathReason('/items/42')).toBeUndefined();
    expect(unsafePathReason('/items/%2e%2e%2e')).toBeUndefined();
    expect(unsafePathReason('/items/%252525252e')).toMatch(/too many/);
    expect(unsafePathReason('/a/%2e%2E')).toMatch(/dot segment/);
    expect(unsafePathReason('/a/%2f')).toMatch(/encoded/);
    expect(unsafePathReason('/a\\b')).toMatch(/backslash/);
  });
});
