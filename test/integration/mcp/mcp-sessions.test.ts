// MCP sessions with the real SDK Client over Streamable HTTP: bound to the key that opened them, re-checked on every
// request (a key revoked by another process answers 401 at once), capped per org (the least recently used idle
// session makes room; all busy means 429) and closed when idle.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFailure, http } from '../../helpers/http.js';
import { waitFor } from '../../helpers/ports.js';
import { sql } from '../../helpers/db.js';
import { statusOf, surface, type Surface } from '../../helpers/mcp-served.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { postInitialize } from '../../helpers/mcp-eras.js';

const CAP = 3;
const IDLE_MS = 3_000; // headroom for a loaded machine: a request every IDLE_MS / 3 must never look idle

async function connect(url: string, key: string) {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  client.onerror = () => undefined; // a closed session's GET stream ends; the calls below say what happened
  await client.connect(transport);
  return { client, transport, id: transport.sessionId! };
}
type Connected = Awaited<ReturnType<typeof connect>>;

describe('MCP sessions', () => {
  let main: Surface; // MCP_SESSIONS_PER_ORG=3
  let idle: Surface; // MCP_SESSION_IDLE_MS=IDLE_MS, its own database
  let controlPlane: TestStack; // another process on the same database and Redis prefix
  const clients: Connected[] = [];

  const open = async (s: Surface, key: string) => {
    const c = await connect(s.server.url, key);
    clients.push(c);
    return c;
  };
  const register = async (s: Surface = main) => (await s.stack.services.accounts.register({ ip: '10.9.0.1' })).api_key;
  const principalOf = async (key: string) => (await main.stack.services.keys.authenticate(key)).principal;

  beforeAll(async () => {
    const stack = await createTestStack({ env: { MCP_SESSIONS_PER_ORG: String(CAP) } });
    main = await surface(stack);
    // A database of its own: the idle limit is the stored sessions' expiry, so every instance on a database shares it.
    idle = await surface(await createTestStack({ env: { MCP_SESSION_IDLE_MS: String(IDLE_MS) } }));
    controlPlane = await createTestStack({ db: stack.db, env: { REDIS_KEY_PREFIX: stack.config.counters.keyPrefix } });
  });
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.client.close()));
    for (const s of [idle, main]) {
      await s?.mcp.close();
      await s?.server.close();
    }
    await controlPlane?.close();
    await idle?.stack.close();
    await main?.stack.close();
  });

  it('belongs to the key that opened it: another key of the same org gets 404, the owner carries on', async () => {
    const key = await register();
    const owner = await open(main, key);
    const sibling = await main.stack.services.keyAdmin.create(await principalOf(key), { name: 'sibling' });
    const res = await http(main.server.url, 'POST', '/mcp', {
      token: sibling.api_key,
      body: { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} },
      headers: { 'mcp-session-id': owner.id, accept: 'application/json, text/event-stream' },
    });
    expectFailure(res, 404, 'not_found');
    expect((await owner.client.listTools()).tools.map((t) => t.name)).toContain('svc_register');
  });

  it('re-checks the key on every request: revoked by another process, its session answers 401 at once and closes', async () => {
    const key = await register();
    const session = await open(main, key);
    await session.client.listTools(); // the key is now in this process's cache
    const before = main.mcp.openSessions();
    const principal = await principalOf(key);
    if (principal.type !== 'api_key') throw new Error('expected a key');
    await controlPlane.services.keyAdmin.revoke(principal, principal.keyId);

    const request = () =>
      http(main.server.url, 'POST', '/mcp', {
        token: key,
        body: { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} },
        headers: { 'mcp-session-id': session.id, accept: 'application/json, text/event-stream' },
      });
    // The invalidation travels over Redis pub/sub: allow it the few milliseconds that takes, no more.
    const res = await waitFor(
      async () => {
        const r = await request();
        return r.status === 401 ? r : false;
      },
      { timeoutMs: 500, intervalMs: 10, what: '401 after revocation' },
    );
    expectFailure(res, 401, 'unauthenticated');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", resource_metadata=/);
    expect(main.mcp.openSessions()).toBe(before - 1);
    expect(await statusOf(session.client.listTools())).toBe(401);
  });

  it(`caps an org at ${CAP} sessions: one more closes the least recently used idle one, whose id then answers 404`, async () => {
    const key = await register();
    const [a, b, c] = [await open(main, key), await open(main, key), await open(main, key)];
    await a.client.listTools(); // b is now the least recently used
    const other = await open(main, await register()); // another org is not affected
    const d = await open(main, key);

    expect(await statusOf(b.client.listTools())).toBe(404);
    for (const s of [a, c, d, other]) expect(await statusOf(s.client.listTools())).toBe('ok');
  });

  it('never closes a session with a call in flight; when every session of the org is busy, a new one gets 429', async () => {
    const key = await register();
    const lock = new pg.Client({ connectionString: main.stack.db.url });
    await lock.connect();
    const waiting = async (n: number) =>
      waitFor(
        async () => {
          const { rows } = await lock.query<{ n: number }>(
            "select count(*)::int as n from pg_locks where relation = 'orgs'::regclass and not granted",
          );
          return rows[0]!.n >= n;
        },
        { timeoutMs: 10_000, what: `${n} calls waiting on the lock` },
      );
    const calls: Promise<unknown>[] = [];
    await principalOf(key); // the key is cached: looking it up must not wait on the lock below
    try {
      // svc_register inserts an org: with the table locked, the call stays in flight until we let go.
      await lock.query('begin');
      await lock.query('lock table orgs in access exclusive mode');
      const first = await open(main, key);
      const call = (s: Connected) => s.client.callTool({ name: 'svc_register', arguments: {} });
      calls.push(call(first));
      await waiting(1);
      const second = await open(main, key);
      const third = await open(main, key);
      const fourth = await open(main, key); // `first` is least recently used, but busy: `second` makes room
      expect(await statusOf(second.client.listTools())).toBe(404);

      calls.push(call(third), call(fourth));
      await waiting(3);
      const res = await postInitialize(main.server.url, key, { protocolVersion: '2025-06-18' });
      expectFailure(res, 429, 'rate_limited');
      expect(res.body.error.message).toMatch(/has 3 open MCP sessions, each with a call in progress/);
      expect(res.headers.get('retry-after')).toBe('5');

      await lock.query('commit');
      for (const result of await Promise.all(calls)) expect((result as { isError?: boolean }).isError).toBeFalsy();
    } finally {
      await lock.query('rollback').catch(() => undefined);
      await Promise.allSettled(calls);
      await lock.end();
    }
  });

  it('closes a session idle past the limit (the sweep, even with its GET stream open); its id then answers 404', async () => {
    const session = await open(idle, await register(idle));
    expect(await statusOf(session.client.listTools())).toBe('ok');
    expect(idle.mcp.openSessions()).toBe(1);
    await waitFor(() => Promise.resolve(idle.mcp.openSessions() === 0), {
      timeoutMs: IDLE_MS * 3,
      what: 'the idle sweep',
    });
    expect(await statusOf(session.client.listTools())).toBe(404);
  });

  it('a session in use does not expire', async () => {
    const session = await open(idle, await register(idle));
    // Longer in total than the idle limit, with a request every third of it.
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, IDLE_MS / 3));
      expect(await statusOf(session.client.listTools()), `request ${i}`).toBe('ok');
    }
  });

  it('stays within the cap when an org opens many sessions at once', async () => {
    const key = await register();
    const { orgId } = await principalOf(key);
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => open(main, key)));
    // Each open either took a slot (evicting an idle one) or was refused with 429 while all were busy.
    expect(results.filter((r) => r.status === 'fulfilled').length).toBeGreaterThanOrEqual(CAP);
    // Counted for this org only: the process's own count also moves with other tests' clients reconnecting.
    const [row] = await sql<{ n: string }>(
      main.stack.db.url,
      'select count(*) as n from mcp_sessions where org_id = $1 and ended_at is null',
      [orgId],
    );
    expect(Number(row!.n)).toBe(CAP);
  });
});
