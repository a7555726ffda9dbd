// MCP sessions stored in Postgres, with the real SDK Client: a session opened on one instance is served by another
// and after a restart of the MCP process without a new initialize; revoking its key ends it everywhere at once;
// another key, DELETE, 30 days idle (injected clock) and the org's cap end or hide it; Origin and Host are checked.
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { ManualClock } from '../../../core/clock.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { sql } from '../../helpers/db.js';
import { statusOf, surface, type Surface } from '../../helpers/mcp-served.js';
import { REDIS_URL } from '../../helpers/env.js';
import { expectFailure, http, serve } from '../../helpers/http.js';
import { waitFor } from '../../helpers/ports.js';
import { startProcess, type RunningProcess } from '../../helpers/processes.js';
import { createTestStack, NO_TEMPORAL, type TestStack } from '../../helpers/services.js';

const CAP = 2;
const DAY = 86_400_000;

async function closeSurface(s: Surface | undefined, ownsStack = true): Promise<void> {
  await s?.mcp.close();
  await s?.server.close();
  if (ownsStack) await s?.stack.close();
}

/**
 * An SDK client on `baseUrl`: a new session, or (with `sessionId`) an existing one, which the SDK client joins
 * without initializing. `methods` records every JSON-RPC method the client sent. `reconnect: false` stops the client
 * reopening its GET stream when the server closes it.
 */
async function connect(baseUrl: string, key: string, options: { sessionId?: string; reconnect?: boolean } = {}) {
  const methods: string[] = [];
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    sessionId: options.sessionId,
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    ...(options.reconnect === false
      ? {
          reconnectionOptions: {
            maxRetries: 0,
            initialReconnectionDelay: 1_000,
            maxReconnectionDelay: 1_000,
            reconnectionDelayGrowFactor: 1,
          },
        }
      : {}),
    fetch: (url, init) => {
      if (typeof init?.body === 'string') methods.push((JSON.parse(init.body) as { method: string }).method);
      return fetch(url, init);
    },
  });
  const client = new Client({ name: 'durable-agent', version: '3.0.0' });
  client.onerror = () => undefined; // a GET stream ending when its process stops is expected here
  await client.connect(transport);
  return { client, transport, id: transport.sessionId!, methods };
}
type Connected = Awaited<ReturnType<typeof connect>>;

const register = async (stack: TestStack) => (await stack.services.accounts.register({ ip: '10.8.0.1' })).api_key;
const keyIdOf = async (stack: TestStack, key: string) => {
  const { principal } = await stack.services.keys.authenticate(key);
  if (principal.type !== 'api_key') throw new Error('expected a key');
  return principal.keyId;
};

interface SessionRow {
  last_seen_at: Date;
  ended_at: Date | null;
  end_reason: string | null;
  protocol_version: string;
  client_info: unknown;
}
const rowsOfKey = (stack: TestStack, keyId: string) =>
  sql<SessionRow>(stack.db.url, 'select * from mcp_sessions where key_id = $1 order by created_at', [keyId]);

const toolsCall = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/list',
  params: {},
});
const sessionHeaders = (id: string) => ({ 'mcp-session-id': id, accept: 'application/json, text/event-stream' });

describe('durable MCP sessions across instances', () => {
  let a: Surface;
  let b: Surface; // another instance: same database, same Redis prefix (key invalidations reach it)
  let api: RunningHttpServer;
  const clients: Connected[] = [];
  const track = (c: Connected) => (clients.push(c), c);

  beforeAll(async () => {
    const env = { MCP_SESSIONS_PER_ORG: String(CAP) };
    const stack = await createTestStack({ env });
    a = await surface(stack);
    const prefix = stack.config.counters.keyPrefix;
    b = await surface(await createTestStack({ db: stack.db, env: { ...env, REDIS_KEY_PREFIX: prefix } }));
    api = await serve(createApiApp(stack.services).callback());
  });
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.client.close()));
    await api?.close();
    await closeSurface(b);
    await closeSurface(a);
  });

  it('serves a session opened on one instance on another, with no new initialize', async () => {
    const key = await register(a.stack);
    const onA = track(await connect(a.server.url, key));
    expect((await onA.client.callTool({ name: 'svc_register', arguments: {} })).isError).toBeFalsy();
    const heldByB = b.mcp.openSessions();

    const onB = track(await connect(b.server.url, key, { sessionId: onA.id }));
    expect((await onB.client.listTools()).tools.map((t) => t.name)).toContain('svc_register');
    const result = await onB.client.callTool({ name: 'svc_register', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(onB.methods).not.toContain('initialize');
    expect(onB.methods).toEqual(['tools/list', 'tools/call']);
    expect(b.mcp.openSessions()).toBe(heldByB + 1);

    // One stored session, with what rebuilding it needed; and instance A still serves it too.
    const rows = await rowsOfKey(a.stack, await keyIdOf(a.stack, key));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      protocol_version: '2025-11-25',
      client_info: { name: 'durable-agent', version: '3.0.0' },
      ended_at: null,
    });
    expect(await statusOf(onA.client.listTools())).toBe('ok');
  });

  it('answers another key with the id 404 on every instance, and the owner carries on', async () => {
    const key = await register(a.stack);
    const owner = track(await connect(a.server.url, key));
    const sibling = await a.stack.services.keyAdmin.create((await a.stack.services.keys.authenticate(key)).principal, {
      name: 'sibling',
    });
    for (const s of [a, b]) {
      const res = await http(s.server.url, 'POST', '/mcp', {
        token: sibling.api_key,
        body: toolsCall(4),
        headers: sessionHeaders(owner.id),
      });
      expectFailure(res, 404, 'not_found');
    }
    expect(await statusOf(owner.client.listTools())).toBe('ok');
    expect(await statusOf(track(await connect(b.server.url, key, { sessionId: owner.id })).client.listTools())).toBe(
      'ok',
    );
  });

  it('ends the sessions of a key revoked over REST at once: 401 on every instance, the row ended', async () => {
    const key = await register(a.stack);
    const keyId = await keyIdOf(a.stack, key);
    const onA = track(await connect(a.server.url, key));
    const onB = track(await connect(b.server.url, key, { sessionId: onA.id }));
    await onB.client.listTools(); // both instances now hold the session live, and the key in their caches
    const held = { a: a.mcp.openSessions(), b: b.mcp.openSessions() };

    const revoked = await http(api.url, 'DELETE', `/v1/keys/${keyId}`, { token: key });
    expect(revoked.status, revoked.text).toBe(200);
    expect(await rowsOfKey(a.stack, keyId)).toEqual([
      expect.objectContaining({ end_reason: 'key_revoked', ended_at: expect.any(Date) }),
    ]);

    for (const s of [a, b]) {
      const res = await waitFor(
        async () => {
          const r = await http(s.server.url, 'POST', '/mcp', {
            token: key,
            body: toolsCall(5),
            headers: sessionHeaders(onA.id),
          });
          return r.status === 401 ? r : false;
        },
        { timeoutMs: 500, intervalMs: 10, what: '401 after revocation' },
      );
      expectFailure(res, 401, 'unauthenticated');
    }
    expect(a.mcp.openSessions()).toBe(held.a - 1);
    expect(b.mcp.openSessions()).toBe(held.b - 1);
  });

  it('ends a session everywhere on DELETE /mcp: later requests on any instance get 404', async () => {
    const key = await register(a.stack);
    const onA = track(await connect(a.server.url, key));
    const onB = track(await connect(b.server.url, key, { sessionId: onA.id }));
    await onB.transport.terminateSession();
    expect((await rowsOfKey(a.stack, await keyIdOf(a.stack, key)))[0]).toMatchObject({ end_reason: 'terminated' });
    for (const s of [a, b]) {
      const res = await http(s.server.url, 'POST', '/mcp', {
        token: key,
        body: toolsCall(6),
        headers: sessionHeaders(onA.id),
      });
      expectFailure(res, 404, 'not_found');
    }
    expect(await statusOf(onA.client.listTools())).toBe(404);
  });

  it(`caps an org at ${CAP} sessions across instances: one more ends the least recently used`, async () => {
    const key = await register(a.stack);
    const first = track(await connect(a.server.url, key));
    const second = track(await connect(b.server.url, key));
    await first.client.listTools(); // `second` is now the least recently used
    const third = track(await connect(a.server.url, key));

    expect(await statusOf(second.client.listTools())).toBe(404);
    expect(await statusOf(first.client.listTools())).toBe('ok');
    expect(await statusOf(track(await connect(b.server.url, key, { sessionId: third.id })).client.listTools())).toBe(
      'ok',
    );
    const rows = await rowsOfKey(a.stack, await keyIdOf(a.stack, key));
    expect(rows.map((r) => r.end_reason)).toEqual([null, 'evicted', null]);
  });

  it('refuses a foreign Origin (403, before authentication) and accepts its own', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'browser', version: '1' } },
    };
    const headers = { accept: 'application/json, text/event-stream' };
    const bad = await http(a.server.url, 'POST', '/mcp', {
      body: initialize,
      headers: { ...headers, origin: 'https://evil.example' },
    });
    expectFailure(bad, 403, 'forbidden');
    const own = new URL(a.stack.config.urls.mcp).origin;
    const good = await http(a.server.url, 'POST', '/mcp', {
      token: await register(a.stack),
      body: initialize,
      headers: { ...headers, origin: own },
    });
    expect(good.status, good.text).toBe(200);
    expect(good.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses a Host that is not this server (DNS rebinding) and accepts the loopback names', async () => {
    const key = await register(a.stack);
    const port = new URL(a.server.url).port;
    const status = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path: '/mcp',
            method: 'POST',
            headers: {
              host,
              authorization: `Bearer ${key}`,
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode!));
          },
        );
        req.on('error', reject);
        req.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
          }),
        );
      });
    expect(await status(`attacker.example:${port}`)).toBe(403);
    expect(await status(`localhost:${port}`)).toBe(200);
    expect(await status(`127.0.0.1:${port}`)).toBe(200);
  });
});

describe('durable MCP sessions across a restart of the MCP process', () => {
  let stack: TestStack;
  let proc: RunningProcess | undefined;
  const env = () => ({
    DATABASE_URL: stack.db.url,
    REDIS_URL,
    REDIS_KEY_PREFIX: stack.config.counters.keyPrefix,
    TEMPORAL_ADDRESS: NO_TEMPORAL,
    SHUTDOWN_GRACE_MS: '500',
  });

  beforeAll(async () => {
    stack = await createTestStack();
  });
  afterAll(async () => {
    await proc?.stop('SIGKILL');
    await stack?.close();
  });

  it('serves the same Mcp-Session-Id after the process is stopped and a new one started, without initialize', async () => {
    const key = await register(stack);
    proc = await startProcess({ roles: ['mcp'], env: env() });
    const before = await connect(proc.urls.mcp, key);
    expect((await before.client.callTool({ name: 'svc_register', arguments: {} })).isError).toBeFalsy();
    expect(await proc.stop('SIGTERM')).toBe(0); // its client's GET stream is still open
    await before.client.close();

    proc = await startProcess({ roles: ['mcp'], env: env() });
    const after = await connect(proc.urls.mcp, key, { sessionId: before.id });
    expect((await after.client.listTools()).tools.map((t) => t.name)).toContain('svc_register');
    expect((await after.client.callTool({ name: 'svc_register', arguments: {} })).isError).toBeFalsy();
    expect(after.methods).toEqual(['tools/list', 'tools/call']);
    expect(await rowsOfKey(stack, await keyIdOf(stack, key))).toEqual([
      expect.objectContaining({ ended_at: null, client_info: { name: 'durable-agent', version: '3.0.0' } }),
    ]);
    await after.client.close();
  });
});

describe('MCP session expiry and the in-process cache (injected clock)', () => {
  let clock: ManualClock;
  let s: Surface;
  const clients: Connected[] = [];

  beforeAll(async () => {
    clock = new ManualClock(Date.now());
    // A database of its own: moving this instance's clock 30 days ahead expires every session it can see.
    s = await surface(await createTestStack({ clock, env: { MCP_SESSION_CACHE_MAX: '1' } }));
  });
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.client.close()));
    await closeSurface(s);
  });

  it('rewrites last_seen at most once a minute, and expires a session 30 days after it', async () => {
    const key = await register(s.stack);
    const keyId = await keyIdOf(s.stack, key);
    const session = await connect(s.server.url, key);
    clients.push(session);
    const seen = async () => (await rowsOfKey(s.stack, keyId))[0]!.last_seen_at.getTime();
    const opened = await seen();

    for (let i = 0; i < 5; i++) {
      clock.advance(10_000);
      expect(await statusOf(session.client.listTools())).toBe('ok');
    }
    expect(await seen()).toBe(opened); // 50 s of requests: no write
    clock.advance(11_000);
    expect(await statusOf(session.client.listTools())).toBe('ok');
    const touched = await seen();
    expect(touched).toBe(clock.now().getTime());

    clock.advance(30 * DAY - 1_000);
    expect(await statusOf(session.client.listTools())).toBe('ok'); // 1 s short of 30 days idle
    clock.advance(30 * DAY);
    expect(await statusOf(session.client.listTools())).toBe(404);
    const fresh = await connect(s.server.url, key); // the client starts over
    clients.push(fresh);
    expect(await statusOf(fresh.client.listTools())).toBe('ok');
  });

  it('drops sessions from memory beyond the cache size and rebuilds them from the store on their next request', async () => {
    // No GET-stream reopening: with room for one session, two reopening streams would take turns evicting each other.
    const first = await connect(s.server.url, await register(s.stack), { reconnect: false });
    const second = await connect(s.server.url, await register(s.stack), { reconnect: false });
    clients.push(first, second);
    expect(s.mcp.openSessions()).toBe(1); // MCP_SESSION_CACHE_MAX=1: `first` was dropped from memory
    expect(await statusOf(first.client.listTools())).toBe('ok');
    expect(await statusOf(second.client.listTools())).toBe('ok');
    expect(s.mcp.openSessions()).toBe(1);
  });
});
