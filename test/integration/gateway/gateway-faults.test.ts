// The gateway under faults, with real processes: a gateway killed between reserve and commit has its reservation
// voided by another process's sweeper; the rate limit holds across two gateway processes sharing Redis; Redis
// stopped mid-call gives 503 for paid calls and never an unbilled 2xx.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createPerson } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, serve } from '../../helpers/http.js';
import type { LiveApi } from '../../helpers/listings.js';
import { freePort } from '../../helpers/ports.js';
import { stackRoleEnv, startGatewayPair, startProcess, type RunningProcess } from '../../helpers/processes.js';
import { startListedStack } from '../../helpers/listed-stack.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import type { Upstream } from '../../helpers/upstream.js';
import { createConsumer } from '../../helpers/fixtures.js';

describe('gateway faults', () => {
  let stack: TestStack;
  let upstream: Upstream;
  let api: LiveApi;

  beforeAll(async () => {
    ({ stack, upstream, api } = await startListedStack({
      env: { GATEWAY_UPSTREAM_TIMEOUT_MS: '1000', GATEWAY_SWEEP_INTERVAL_MS: '500' },
      endpoints: [
        { method: 'GET', path: '/paid', priceCents: 3 },
        { method: 'GET', path: '/free', priceCents: 0 },
      ],
    }));
  });
  afterAll(async () => {
    // The books balance after every fault: usage debits match earnings, balances match ledgers.
    await stack?.services.earnings.foldAll();
    const report = await stack?.services.reconciliation.run();
    expect(report?.ok, JSON.stringify(report)).toBe(true);
    await stack?.close();
    await upstream?.close();
  });

  const gatewayEnv = (extra: Record<string, string> = {}) =>
    stackRoleEnv(stack, { GATEWAY_UPSTREAM_TIMEOUT_MS: '1000', ...extra });
  const balance = async (orgId: string) =>
    Number(
      (await sql<{ credit_cents: string }>(stack.db.url, 'select credit_cents from orgs where id = $1', [orgId]))[0]!
        .credit_cents,
    );

  it('a gateway killed between reserve and commit: another process voids the reservation within 60 s', async () => {
    const c = await createConsumer(stack.services, 3);
    const doomed: RunningProcess = await startProcess({ roles: ['gateway'], env: gatewayEnv() });
    const before = upstream.seen.length;
    upstream.handle(() => undefined); // never answers
    const pending = http(doomed.urls.gateway, 'GET', `/v1/proxy/${api.slug}/paid`, { token: c.apiKey }).catch(
      () => undefined,
    );
    await expect.poll(() => upstream.seen.length, { timeout: 10_000 }).toBe(before + 1);
    await doomed.stop('SIGKILL');
    await pending;
    upstream.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });

    // The whole balance is held by the dead process's reservation: a surviving gateway refuses the call...
    const gateway: GatewayHandler = createGatewayHandler(stack.services);
    const server: RunningHttpServer = await serve(gateway);
    try {
      const call = () => http(server.url, 'GET', `/v1/proxy/${api.slug}/paid`, { token: c.apiKey });
      expectFailure(await call(), 402, 'payment_required');
      // ...until its sweeper voids it (upstream timeout + margin), well within 60 s.
      const killedAt = Date.now();
      await expect.poll(async () => (await call()).status, { timeout: 60_000, interval: 500 }).toBe(200);
      expect(Date.now() - killedAt).toBeLessThan(60_000);
      await gateway.drain.flush(); // Postgres has the call (the usage drain: docs/durability.md)
      expect(await balance(c.orgId)).toBe(0);
      const [row] = await sql(
        stack.db.url,
        "select count(*)::int as n from usage_events where org_id = $1 and outcome = 'success'",
        [c.orgId],
      );
      expect(row).toEqual({ n: 1 }); // only the call made after the void
    } finally {
      await server.close();
      await gateway.close();
    }
  }, 90_000);

  it('the rate limit holds across two gateway processes sharing Redis', async () => {
    const c = await createPerson(stack.services);
    const env = gatewayEnv({ GATEWAY_RATE_LIMIT_PER_MIN: '10' });
    const [a, b] = await startGatewayPair(env);
    try {
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 16; i++) {
        const target = i % 2 === 0 ? a : b;
        const res = await http(target.urls.gateway, 'GET', `/v1/proxy/${api.slug}/free`, { token: c.apiKey });
        statuses.push(res.status);
        if (res.status === 429) {
          expectFailure(res, 429, 'rate_limited');
          retryAfter = res.headers.get('retry-after');
        }
      }
      // Unless the minute window rolled over mid-test, exactly 10 of the 16 pass.
      const passed = statuses.filter((s) => s === 200).length;
      expect(passed === 10 || (passed > 10 && passed <= 16 && new Date().getSeconds() < 5)).toBe(true);
      expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);

  it('Redis stopped during paid calls: 503, and every 2xx is billed', async () => {
    const port = await freePort();
    const redis: ChildProcess = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    const own = await createTestStack({
      db: stack.db,
      env: { REDIS_URL: `redis://127.0.0.1:${port}`, GATEWAY_UPSTREAM_TIMEOUT_MS: '1000' },
    }).catch((err: unknown) => {
      redis.kill('SIGKILL');
      throw err;
    });
    const gateway = createGatewayHandler(own.services);
    const server = await serve(gateway);
    try {
      const c = await createConsumer(own.services, 300);
      const call = (path: string) => http(server.url, 'GET', `/v1/proxy/${api.slug}${path}`, { token: c.apiKey });
      expect((await call('/paid')).status).toBe(200);
      upstream.handle((_req, res) => {
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"ok":true}');
        }, 200);
      });
      const inFlight = Array.from({ length: 10 }, () => call('/paid'));
      await new Promise((r) => setTimeout(r, 50));
      redis.kill('SIGKILL');
      const during = await Promise.all(inFlight);
      const after = await Promise.all(Array.from({ length: 5 }, () => call('/paid')));
      for (const res of after) expectFailure(res, 503, 'internal_error');
      const ok = [...during, ...after].filter((r) => r.status === 200).length + 1;
      expect([...during].every((r) => r.status === 200 || r.status === 503)).toBe(true);
      // Every 200 was settled in Redis before it died; the drain still books them (their acks fail, harmlessly).
      await gateway.drain.flush();
      const [row] = await sql(
        stack.db.url,
        "select count(*)::int as n, coalesce(sum(cost_cents), 0)::int as cost from usage_events where org_id = $1 and outcome = 'success'",
        [c.orgId],
      );
      expect(row).toEqual({ n: ok, cost: ok * 3 });
      expect(await balance(c.orgId)).toBe(300 - ok * 3);
      // A free call is still served (unmetered) while the counter store is down.
      expect((await call('/free')).status).toBe(200);
    } finally {
      upstream.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
      redis.kill('SIGKILL');
      await server.close();
      await gateway.close();
      await own.services.close();
    }
  }, 60_000);
});
