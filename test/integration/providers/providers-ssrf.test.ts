// SSRF through the provider routes, with UPSTREAM_ALLOW_PRIVATE=false: every address of the acceptance list is refused
// for base_url and for import_from, and a canary listener on loopback sees no connection at all.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LookupAll } from '../../../core/upstream/upstream-guard.js';
import { createApiApp } from '../../../api/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http as call, serve } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

describe('SSRF guard on provider URLs', () => {
  let canary: http.Server;
  let canaryPort: number;
  let connections = 0;
  let redirector: http.Server;
  let redirectorPort: number;
  let stack: TestStack;
  let server: RunningHttpServer;
  let provider: Person;

  // Names only this test resolves: a public-looking upstream (trusted 127.0.0.2) and one that points at loopback.
  const lookup: LookupAll = async (hostname) => {
    if (hostname === 'evil.example') return [{ address: '127.0.0.1', family: 4 }];
    if (hostname === 'api.example.test' || hostname === 'redirect.example.test')
      return [{ address: '127.0.0.2', family: 4 }];
    const { lookup: dnsLookup } = await import('node:dns/promises');
    return (await dnsLookup(hostname, { all: true })) as { address: string; family: 4 | 6 }[];
  };

  beforeAll(async () => {
    canary = http.createServer((_req, res) => res.end('canary'));
    canary.on('connection', () => connections++);
    await new Promise<void>((r) => canary.listen(0, '127.0.0.1', r));
    canaryPort = (canary.address() as AddressInfo).port;
    redirector = http.createServer((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${canaryPort}/openapi.json` });
      res.end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.2', r));
    redirectorPort = (redirector.address() as AddressInfo).port;

    stack = await createTestStack({
      env: { UPSTREAM_ALLOW_PRIVATE: 'false' },
      upstream: { lookup, trustedAddresses: ['127.0.0.2'] },
    });
    server = await serve(createApiApp(stack.services).callback());
    provider = await createPerson(stack.services);
  });
  afterAll(async () => {
    await server?.close();
    await stack?.close();
    await new Promise((r) => canary.close(r));
    await new Promise((r) => redirector.close(r));
  });

  const p = () => canaryPort;
  const TARGETS: [string, () => string][] = [
    ['127.0.0.1', () => `http://127.0.0.1:${p()}/openapi.json`],
    ['localhost', () => `http://localhost:${p()}/openapi.json`],
    ['[::1]', () => `http://[::1]:${p()}/openapi.json`],
    ['0.0.0.0', () => `http://0.0.0.0:${p()}/openapi.json`],
    ['169.254.169.254', () => 'http://169.254.169.254/latest/meta-data/'],
    ['10.0.0.1', () => 'http://10.0.0.1/openapi.json'],
    ['172.16.0.1', () => 'http://172.16.0.1/openapi.json'],
    ['192.168.0.1', () => 'http://192.168.0.1/openapi.json'],
    ['[fc00::1]', () => 'http://[fc00::1]/openapi.json'],
    ['[::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${p()}/openapi.json`],
    ['2130706433', () => `http://2130706433:${p()}/openapi.json`],
    ['0177.0.0.1', () => `http://0177.0.0.1:${p()}/openapi.json`],
    ['0x7f000001', () => `http://0x7f000001:${p()}/openapi.json`],
    ['file:', () => 'file:///etc/passwd'],
    ['gopher:', () => `gopher://127.0.0.1:${p()}/_x`],
    ['a host resolving to loopback', () => `http://evil.example:${p()}/openapi.json`],
  ];

  it.each(TARGETS)('refuses %s as base_url and as import_from', async (_label, url) => {
    const base = { name: 'x', summary: 's', endpoints: [{ method: 'GET', path: '/x' }] };
    const asBase = await call(server.url, 'POST', '/v1/provider/apis', {
      token: provider.session,
      body: { ...base, slug: 'ssrf-base', base_url: url() },
    });
    expectFailure(asBase, 400, 'validation_failed');
    expect(asBase.body.error.details.field).toBe('base_url');
    // A provider trying a local upstream learns the development switch (issue 22).
    expect(asBase.body.error.message).toContain('UPSTREAM_ALLOW_PRIVATE=true');
    expect(asBase.body.error.details.hint).toContain('never in production');
    for (const type of ['openapi_url', 'external_url']) {
      const asImport = await call(server.url, 'POST', '/v1/provider/apis', {
        token: provider.session,
        body: {
          ...base,
          slug: 'ssrf-import',
          base_url: 'https://api.example.test/v1',
          import_from: { type, url: url() },
        },
      });
      expectFailure(asImport, 400, 'validation_failed');
      expect(asImport.body.error.details.field).toBe('import_from.url');
    }
    expect(connections).toBe(0);
  });

  it('refuses a redirect to loopback during an import, before connecting to it', async () => {
    const res = await call(server.url, 'POST', '/v1/provider/apis', {
      token: provider.session,
      body: {
        name: 'x',
        slug: 'ssrf-redirect',
        summary: 's',
        base_url: 'https://api.example.test/v1',
        import_from: { type: 'openapi_url', url: `http://redirect.example.test:${redirectorPort}/openapi.json` },
      },
    });
    expectFailure(res, 400, 'validation_failed');
    expect(res.body.error.details).toMatchObject({ field: 'import_from.url', reason: 'blocked_address' });
    expect(connections).toBe(0);
  });

  it('refuses plain http for a public upstream and accepts https', async () => {
    const plain = await call(server.url, 'POST', '/v1/provider/apis', {
      token: provider.session,
      body: { name: 'x', slug: 'plain', summary: 's', base_url: 'http://api.example.test.invalid/v1' },
    });
    expectFailure(plain, 400, 'validation_failed');
    const tls = await call(server.url, 'POST', '/v1/provider/apis', {
      token: provider.session,
      body: {
        name: 'x',
        slug: 'tls-ok',
        summary: 's',
        base_url: 'https://api.example.test/v1',
        endpoints: [{ method: 'GET', path: '/x' }],
      },
    });
    expect(tls.status).toBe(201);
    const [row] = await sql<{ n: string }>(stack.db.url, "select count(*) as n from apis where slug like 'ssrf-%'");
    expect(row?.n).toBe('0');
    expect(connections).toBe(0);
  });

  it('the canary does count connections (so zero above means something)', async () => {
    await fetch(`http://127.0.0.1:${canaryPort}/`);
    expect(connections).toBe(1);
  });
});
