// The all-in-one's gateway thread (gateway/thread.ts) on Postgres and Redis: it listens on its own
// port and event loop, so its calls are answered while the main thread's loop is blocked (what `npm start` needs from
// it: the control plane, the agent tools and the Temporal worker never sit between a call and its answer); its
// metrics join the main thread's, labelled; it stops gracefully with its usage committed. The embedded defaults
// (the counters and the memory spend store shared over message ports) run in test/e2e/register-me.e2e.test.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../core/logger.js';
import { Metrics } from '../../../core/metrics/metrics.js';
import { startGatewayThread, type GatewayThread } from '../../../gateway/thread.js';
import { createConsumer, createPaidApi } from '../../helpers/fixtures.js';
import { sql } from '../../helpers/db.js';
import { http, serve } from '../../helpers/http.js';
import { freePort } from '../../helpers/ports.js';
import { stackRoleEnv } from '../../helpers/processes.js';
import { createTestStack, NO_TEMPORAL, type TestStack } from '../../helpers/services.js';

let stack: TestStack;
let upstream: ChildProcess;
let slug: string;
let thread: GatewayThread;
/** What the thread exported over OTLP (request bodies of a loopback traces receiver). */
const exported: string[] = [];
let collector: RunningHttpServer;

/** An upstream in a process of its own (one on this thread would stop answering while this thread is blocked). */
async function childUpstream(): Promise<{ child: ChildProcess; url: string }> {
  const script = `
    const server = require('node:http').createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) =>
    child.stdout.once('data', (c: Buffer) => resolve(c.toString().trim())),
  );
  return { child, url: `http://127.0.0.1:${port}` };
}

beforeAll(async () => {
  const served = await childUpstream();
  upstream = served.child;
  stack = await createTestStack();
  slug = (
    await createPaidApi(stack.services, {
      baseUrl: served.url,
      endpoints: [{ method: 'GET', path: '/paid', priceCents: 2 }],
    })
  ).slug;
  collector = await serve((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      exported.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const port = await freePort();
  const scheduleDelay = process.env.OTEL_BSP_SCHEDULE_DELAY;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '100'; // the thread's copy of the environment is taken at its start
  thread = await startGatewayThread({
    tracing: { serviceName: 'svc-thread-test', endpoint: `${collector.url}/v1/traces` },
    overrides: {
      ...stackRoleEnv(stack),
      GATEWAY_PORT: String(port),
      LOG_LEVEL: 'warn',
      // The child calls back to back for 2.5 s: more than a minute's default rate for one key.
      GATEWAY_RATE_LIMIT_PER_MIN: '1000000',
    },
    databaseUrl: stack.db.url,
    temporalAddress: NO_TEMPORAL,
    logger: createLogger({ level: 'warn' }),
    graceMs: 2_000,
  });
  if (scheduleDelay === undefined) delete process.env.OTEL_BSP_SCHEDULE_DELAY;
  else process.env.OTEL_BSP_SCHEDULE_DELAY = scheduleDelay;
}, 60_000);

afterAll(async () => {
  await thread?.stop(); // commits what its drain holds
  if (stack) {
    // The books balance after the thread's calls: usage debits match earnings, balances match ledgers.
    await stack.services.earnings.foldAll();
    const report = await stack.services.reconciliation.run();
    expect(report.ok, JSON.stringify(report)).toBe(true);
  }
  await stack?.close();
  await collector?.close();
  upstream?.kill();
});

/** A child process calling `url` back to back for `ms`: each call's status, start and duration (ms, its clock). */
function callFromChild(
  url: string,
  token: string,
  ms: number,
): Promise<{ status: number; at: number; took: number }[]> {
  const script = `
    const out = [];
    const until = Date.now() + ${ms};
    process.stdout.write('go\\n');
    (async () => {
      while (Date.now() < until) {
        const at = Date.now();
        const res = await fetch(${JSON.stringify(url)}, { headers: { authorization: 'Bearer ${token}' } });
        await res.arrayBuffer();
        out.push({ status: res.status, at, took: Date.now() - at });
      }
      process.stdout.write(JSON.stringify(out) + '\\n');
    })();`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(text.split('\n')[1]!) as never) : reject(new Error(`child exited ${code}`)),
    );
  });
}

describe('the gateway thread', () => {
  it("answers paid calls while the main thread's event loop is blocked, and charges each once", async () => {
    const consumer = await createConsumer(stack.services, 10_000);
    const url = `${thread.url}/v1/proxy/${slug}/paid`;
    expect((await http(thread.url, 'GET', `/v1/proxy/${slug}/paid`, { token: consumer.apiKey })).status).toBe(200);

    const calls = callFromChild(url, consumer.apiKey, 2_500);
    await new Promise((r) => setTimeout(r, 800)); // the child is calling
    const blockedFrom = Date.now();
    while (Date.now() - blockedFrom < 700); // this thread's loop blocked for 700 ms
    const blockedUntil = Date.now();
    const seen = await calls;

    expect(seen.filter((c) => c.status !== 200)).toEqual([]);
    const during = seen.filter((c) => c.at >= blockedFrom && c.at + c.took <= blockedUntil);
    // A gateway on this thread would answer none of them until the block ended.
    expect(during.length).toBeGreaterThan(5);
    expect(Math.max(...during.map((c) => c.took))).toBeLessThan(300);

    await expect
      .poll(
        async () =>
          Number(
            (
              await sql<{ n: string }>(stack.db.url, 'select count(*) as n from usage_events where key_id = $1', [
                consumer.keyId,
              ])
            )[0]!.n,
          ),
        { timeout: 5_000 },
      )
      .toBe(seen.length + 1);
  }, 30_000);

  it("exports its spans with the main thread's service name: a caller's trace continues in the thread", async () => {
    const consumer = await createConsumer(stack.services, 100);
    const traceId = randomBytes(16).toString('hex');
    const res = await http(thread.url, 'GET', `/v1/proxy/${slug}/paid`, {
      token: consumer.apiKey,
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    });
    expect(res.status).toBe(200);
    await expect
      .poll(() => exported.some((b) => b.includes(traceId) && b.includes('svc-thread-test')), { timeout: 10_000 })
      .toBe(true);
  });

  it('serves its series with the main thread\'s on one /metrics, labelled thread="gateway"', async () => {
    const main = new Metrics();
    main.addRemote(() => thread.metrics());
    main.httpRequests.inc({ surface: 'api', route: '/v1/me', method: 'GET', status: '200' });
    const text = await main.exposition();
    expect(text).toMatch(/^http_requests_total\{surface="api",route="\/v1\/me",method="GET",status="200"\} 1$/m);
    expect(text).toMatch(/^http_requests_total\{surface="gateway",[^}]*thread="gateway"\} \d+$/m);
    // One family, one HELP and TYPE: a valid exposition.
    expect(text.match(/^# TYPE http_requests_total counter$/gm)).toHaveLength(1);
  });
});
