// The SSRF guard against real sockets: a loopback canary must never be reached, redirects and DNS rebinding are
// re-checked, and size and time limits hold. Servers on 127.0.0.2 stand in for public hosts via `trustedAddresses`.
import { lookup } from 'node:dns/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../core/logger.js';
import { startHttpServer, type RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { isNonPublicAddress } from '../../../core/upstream/address-policy.js';
import {
  UpstreamGuard,
  UpstreamRequestError,
  type LookupAll,
  type UpstreamFailureReason,
} from '../../../core/upstream/upstream-guard.js';

const TRUSTED = '127.0.0.2';

/** A server that counts every TCP connection it accepts, on 127.0.0.1 and (when available) ::1 on the same port. */
interface Canary {
  port: number;
  connections: () => number;
  close: () => Promise<void>;
}

async function listen(server: http.Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

async function startCanary(): Promise<Canary> {
  let count = 0;
  const handler = (_req: IncomingMessage, res: ServerResponse): void => {
    res.end('canary reached');
  };
  const v4 = http.createServer(handler);
  v4.on('connection', () => count++);
  const port = await listen(v4, 0, '127.0.0.1');
  const servers = [v4];
  const v6 = http.createServer(handler);
  v6.on('connection', () => count++);
  try {
    await listen(v6, port, '::1');
    servers.push(v6);
  } catch {
    // No IPv6 loopback here (or the port is taken on ::1): [::1] cases then fail to connect even if unguarded.
  }
  return {
    port,
    connections: () => count,
    close: async () => {
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.closeAllConnections();
              s.close(() => resolve());
            }),
        ),
      );
    },
  };
}

async function serveOn(
  host: string,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<RunningHttpServer> {
  return startHttpServer({
    name: 'upstream-guard-test',
    host,
    port: 0,
    handler,
    logger: createLogger({ level: 'silent' }),
    graceMs: 200,
  });
}

async function rejection(promise: Promise<unknown>): Promise<UpstreamRequestError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(UpstreamRequestError);
    return err as UpstreamRequestError;
  }
  throw new Error('expected the promise to reject');
}

async function expectRefused(promise: Promise<unknown>, reason: UpstreamFailureReason): Promise<UpstreamRequestError> {
  const err = await rejection(promise);
  expect(err.reason, err.message).toBe(reason);
  expect(err.details).toEqual({ reason });
  expect(err.status).toBe(400);
  return err;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('UpstreamGuard', () => {
  let canary: Canary;
  let publicServer: RunningHttpServer; // on 127.0.0.2, trusted
  let loopbackServer: RunningHttpServer; // on 127.0.0.1, only for allowPrivate
  let stalledResponses: ServerResponse[] = [];
  const guards: UpstreamGuard[] = [];
  const guard = (options: ConstructorParameters<typeof UpstreamGuard>[0]): UpstreamGuard => {
    const g = new UpstreamGuard(options);
    guards.push(g);
    return g;
  };
  const publicUrl = (path: string): string => `http://${TRUSTED}:${publicServer.port}${path}`;

  beforeAll(async () => {
    canary = await startCanary();
    loopbackServer = await serveOn('127.0.0.1', (_req, res) => res.end('loopback ok'));
    publicServer = await serveOn(TRUSTED, (req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const hops = /^\/chain\/(\d+)$/.exec(url.pathname);
        if (url.pathname === '/hello') {
          res.writeHead(200, { 'content-type': 'text/plain', 'x-test': 'yes' });
          res.end('hello world');
        } else if (hops) {
          const left = Number(hops[1]);
          if (left === 0) res.end(`arrived ${req.method} ${body}`);
          else res.writeHead(302, { location: `/chain/${left - 1}` }).end();
        } else if (url.pathname === '/to-canary') {
          res.writeHead(302, { location: `http://127.0.0.1:${canary.port}/x` }).end();
        } else if (url.pathname === '/see-other' || url.pathname === '/temporary') {
          res.writeHead(url.pathname === '/see-other' ? 303 : 307, { location: '/echo' }).end();
        } else if (url.pathname === '/echo') {
          res.end(JSON.stringify({ method: req.method, body, contentType: req.headers['content-type'] ?? null }));
        } else if (url.pathname === '/endless') {
          // Never ends: only a reader that stops at maxBytes finishes before the timeout.
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          const chunk = Buffer.alloc(16 * 1024, 0x61);
          const pump = (): void => {
            if (res.destroyed) return;
            if (res.write(chunk)) setImmediate(pump);
            else res.once('drain', pump);
          };
          pump();
        } else if (url.pathname === '/declared-large') {
          // Declares 10 MB, sends a little, then stalls: only an early Content-Length check answers too_large.
          res.writeHead(200, { 'content-length': String(10_000_000) });
          res.write('a'.repeat(100));
          stalledResponses.push(res);
        } else if (url.pathname === '/stall') {
          stalledResponses.push(res); // never answers
        } else if (url.pathname === '/stall-body') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('partial');
          stalledResponses.push(res);
        } else {
          res.writeHead(404).end();
        }
      });
    });
  });

  afterAll(async () => {
    for (const res of stalledResponses) res.destroy();
    stalledResponses = [];
    await Promise.all(guards.map((g) => g.close()));
    await Promise.all([canary.close(), publicServer.close(), loopbackServer.close()]);
  });

  describe('refuses internal targets before connecting', () => {
    // evil.example resolves to loopback; localhost gets the system resolver's real answer; nothing else exists.
    const evilLookup: LookupAll = async (hostname) => {
      if (hostname === 'evil.example') return [{ address: '127.0.0.1', family: 4 }];
      if (hostname === 'localhost') {
        return (await lookup(hostname, { all: true })).map((r) => ({
          address: r.address,
          family: r.family === 6 ? 6 : 4,
        }));
      }
      return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
    };

    // PORT is the canary's port, known only once it listens.
    const cases: [url: string, reason: UpstreamFailureReason][] = [
      ['http://127.0.0.1:PORT/x', 'blocked_address'],
      ['http://localhost:PORT/x', 'blocked_address'], // the real resolver's answer
      ['http://[::1]:PORT/x', 'blocked_address'],
      ['http://0.0.0.0:PORT/x', 'blocked_address'],
      ['http://169.254.169.254/latest/meta-data', 'blocked_address'],
      ['http://10.0.0.1/', 'blocked_address'],
      ['http://172.16.0.1/', 'blocked_address'],
      ['http://192.168.0.1/', 'blocked_address'],
      ['http://[fc00::1]/', 'blocked_address'],
      ['http://[::ffff:127.0.0.1]:PORT/x', 'blocked_address'],
      ['http://2130706433:PORT/x', 'blocked_address'],
      ['http://0177.0.0.1:PORT/x', 'blocked_address'],
      ['http://0x7f000001:PORT/x', 'blocked_address'],
      ['https://127.0.0.1:PORT/x', 'blocked_address'],
      ['http://evil.example:PORT/x', 'blocked_address'], // resolves to loopback through the injected lookup
      ['file:///etc/passwd', 'unsupported_scheme'],
      ['gopher://127.0.0.1:PORT/x', 'unsupported_scheme'],
      ['ftp://127.0.0.1/x', 'unsupported_scheme'],
      ['data:text/plain,hello', 'unsupported_scheme'],
    ];

    it.each(cases)('%s is refused by checkUrl and fetch (%s)', async (template, reason) => {
      const strict = guard({ allowPrivate: false, lookup: evilLookup });
      const url = template.replace('PORT', String(canary.port));
      const checked = await expectRefused(strict.checkUrl(url), reason);
      const fetched = await expectRefused(strict.fetch(url, { maxBytes: 1024, timeoutMs: 2_000 }), reason);
      if (reason === 'blocked_address') {
        expect(checked.message).toMatch(/resolves to a non-public address/);
        expect(fetched.message).toMatch(/resolves to a non-public address/);
      }
    });

    it('and the canary saw no connection from any of them', async () => {
      await sleep(100); // a connection attempt that slipped through would have been accepted by now
      expect(canary.connections()).toBe(0);
    });

    it('relies on the WHATWG URL parser to normalise numeric IPv4 spellings', () => {
      expect(new URL('http://2130706433/').hostname).toBe('127.0.0.1');
      expect(new URL('http://0177.0.0.1/').hostname).toBe('127.0.0.1');
      expect(new URL('http://0x7f000001/').hostname).toBe('127.0.0.1');
      expect(new URL('http://[::ffff:127.0.0.1]/').hostname).toBe('[::ffff:7f00:1]');
    });

    it('re-checks redirect targets: a trusted host redirecting to loopback is refused', async () => {
      const g = guard({ allowPrivate: false, trustedAddresses: [TRUSTED] });
      await expect(g.checkUrl(publicUrl('/to-canary'))).resolves.toBeInstanceOf(URL);
      await expectRefused(g.fetch(publicUrl('/to-canary'), { maxBytes: 1024, timeoutMs: 2_000 }), 'blocked_address');
      await sleep(100);
      expect(canary.connections()).toBe(0);
    });

    it('refuses plain http to public hosts, credentials in URLs, unparsable URLs and unresolvable hosts', async () => {
      const strict = guard({ allowPrivate: false, lookup: evilLookup });
      await expectRefused(strict.checkUrl('http://8.8.8.8/'), 'unsupported_scheme');
      await expect(strict.checkUrl('https://8.8.8.8/x')).resolves.toMatchObject({ href: 'https://8.8.8.8/x' });
      await expectRefused(strict.checkUrl('https://user:pw@8.8.8.8/'), 'invalid_url');
      await expectRefused(strict.checkUrl('not a url'), 'invalid_url');
      await expectRefused(strict.checkUrl('https://nowhere.example/'), 'dns_failed');
    });
  });

  it('defeats DNS rebinding: the connect-time lookup refuses an answer that changed after checkUrl', async () => {
    let calls = 0;
    // Trusted for checkUrl here and the one inside fetch, loopback for the connect-time lookup after them.
    const rebinding: LookupAll = (hostname) => {
      if (hostname !== 'rebind.example') return Promise.reject(new Error('unexpected host'));
      calls++;
      return Promise.resolve([{ address: calls <= 2 ? TRUSTED : '127.0.0.1', family: 4 }]);
    };
    const g = guard({ allowPrivate: false, trustedAddresses: [TRUSTED], lookup: rebinding });
    const url = `http://rebind.example:${canary.port}/x`;
    await expect(g.checkUrl(url)).resolves.toBeInstanceOf(URL);
    const err = await expectRefused(g.fetch(url, { maxBytes: 1024, timeoutMs: 2_000 }), 'blocked_address');
    expect(err.message).toMatch(/rebind\.example resolves to a non-public address/);
    expect(calls).toBe(3); // the refusal came from the dispatcher's lookup, not from checkUrl
    await sleep(100);
    expect(canary.connections()).toBe(0);
  });

  describe('through the trusted seam', () => {
    let g: UpstreamGuard;
    beforeAll(() => {
      g = guard({ allowPrivate: false, trustedAddresses: [TRUSTED] });
    });

    it('returns status, headers and body', async () => {
      const res = await g.fetch(publicUrl('/hello'), { maxBytes: 1024, timeoutMs: 2_000 });
      expect(res.status).toBe(200);
      expect(res.headers['x-test']).toBe('yes');
      expect(res.body.toString('utf8')).toBe('hello world');
      expect(res.url).toBe(publicUrl('/hello'));
      expect(res.redirects).toBe(0);
    });

    it('follows a redirect chain within the limit and counts the hops', async () => {
      const res = await g.fetch(publicUrl('/chain/3'), { maxBytes: 1024, timeoutMs: 2_000 });
      expect(res.status).toBe(200);
      expect(res.body.toString('utf8')).toBe('arrived GET ');
      expect(res.redirects).toBe(3);
      expect(res.url).toBe(publicUrl('/chain/0'));
      const one = await g.fetch(publicUrl('/chain/1'), { maxBytes: 1024, timeoutMs: 2_000, maxRedirects: 1 });
      expect(one.redirects).toBe(1);
    });

    it('refuses more redirects than allowed', async () => {
      await expectRefused(g.fetch(publicUrl('/chain/4'), { maxBytes: 1024, timeoutMs: 2_000 }), 'too_many_redirects');
      await expectRefused(
        g.fetch(publicUrl('/chain/1'), { maxBytes: 1024, timeoutMs: 2_000, maxRedirects: 0 }),
        'too_many_redirects',
      );
    });

    it('turns POST into a body-less GET on 302/303 and keeps it on 307', async () => {
      const post = { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } };
      const seeOther = await g.fetch(publicUrl('/see-other'), { ...post, maxBytes: 1024, timeoutMs: 2_000 });
      expect(JSON.parse(seeOther.body.toString('utf8'))).toEqual({ method: 'GET', body: '', contentType: null });
      const found = await g.fetch(publicUrl('/chain/1'), { ...post, maxBytes: 1024, timeoutMs: 2_000 });
      expect(found.body.toString('utf8')).toBe('arrived GET ');
      const temporary = await g.fetch(publicUrl('/temporary'), { ...post, maxBytes: 1024, timeoutMs: 2_000 });
      expect(JSON.parse(temporary.body.toString('utf8'))).toEqual({
        method: 'POST',
        body: '{"a":1}',
        contentType: 'application/json',
      });
    });

    it('aborts a streamed body (no Content-Length) as soon as it exceeds maxBytes', async () => {
      const started = Date.now();
      await expectRefused(g.fetch(publicUrl('/endless'), { maxBytes: 100_000, timeoutMs: 5_000 }), 'too_large');
      expect(Date.now() - started).toBeLessThan(4_000);
    });

    it('refuses early on a declared Content-Length over the cap', async () => {
      await expectRefused(g.fetch(publicUrl('/declared-large'), { maxBytes: 1_000, timeoutMs: 3_000 }), 'too_large');
    });

    it('bounds the whole exchange by timeoutMs, before and after the headers', async () => {
      for (const path of ['/stall', '/stall-body']) {
        const started = Date.now();
        await expectRefused(g.fetch(publicUrl(path), { maxBytes: 1024, timeoutMs: 500 }), 'timeout');
        const elapsed = Date.now() - started;
        expect(elapsed).toBeGreaterThanOrEqual(450);
        expect(elapsed).toBeLessThan(500 + 1_000);
      }
    });
  });

  it('allowPrivate lets loopback http through', async () => {
    const g = guard({ allowPrivate: true });
    for (const host of ['127.0.0.1', 'localhost']) {
      const url = `http://${host}:${loopbackServer.port}/`;
      await expect(g.checkUrl(url)).resolves.toBeInstanceOf(URL);
      const res = await g.fetch(url, { maxBytes: 1024, timeoutMs: 2_000 });
      expect(res.status).toBe(200);
      expect(res.body.toString('utf8')).toBe('loopback ok');
    }
  });

  it("a named upstream (the demo's) passes by its exact origin and path prefix only, without allowPrivate", async () => {
    const origin = `http://127.0.0.1:${loopbackServer.port}`;
    const g = guard({ allowPrivate: false, named: { origin, pathPrefix: '/demo-upstream/' } });
    const res = await g.fetch(`${origin}/demo-upstream/units`, { maxBytes: 1024, timeoutMs: 2_000 });
    expect(res.body.toString('utf8')).toBe('loopback ok');
    await expect(g.checkUrl(`${origin}/demo-upstream/x/openapi.json`)).resolves.toBeInstanceOf(URL);
    for (const url of [
      `${origin}/`,
      `${origin}/demo-upstreamx`,
      `${origin}/v1/demo-upstream/`,
      `http://localhost:${loopbackServer.port}/demo-upstream/units`,
      `http://127.0.0.1:${canary.port}/demo-upstream/units`,
    ]) {
      await expectRefused(g.checkUrl(url), 'blocked_address');
    }
    // `..` is resolved by the URL parser before the prefix is compared.
    await expectRefused(g.checkUrl(`${origin}/demo-upstream/../v1/keys`), 'blocked_address');
  });

  it('the canary counts connections, so the zero counts above mean something', async () => {
    const g = guard({ allowPrivate: true });
    const before = canary.connections();
    const res = await g.fetch(`http://127.0.0.1:${canary.port}/x`, { maxBytes: 1024, timeoutMs: 2_000 });
    expect(res.body.toString('utf8')).toBe('canary reached');
    expect(canary.connections()).toBe(before + 1);
  });
});

describe('isNonPublicAddress', () => {
  const publicAddresses = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8'];
  const nonPublic = [
    '0.0.0.0',
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '192.0.0.1',
    '192.0.2.1',
    '198.18.0.1',
    '198.51.100.1',
    '203.0.113.1',
    '224.0.0.1',
    '240.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '[::1]',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '2001:db8::1',
    '::ffff:10.0.0.1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:a9fe:a9fe',
    '64:ff9b::a00:1',
    'not-an-ip',
  ];

  it.each(publicAddresses)('%s is public', (ip) => {
    expect(isNonPublicAddress(ip)).toBe(false);
  });
  it.each(nonPublic)('%s is non-public', (ip) => {
    expect(isNonPublicAddress(ip)).toBe(true);
  });
  it('leaves the neighbours of private ranges public', () => {
    for (const ip of ['172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0', '11.0.0.1', '223.255.255.255']) {
      expect(isNonPublicAddress(ip), ip).toBe(false);
    }
  });
});
