/**
 * The fault matrix (issue 15; docs/reliability.md): real processes (gateway, worker, control plane, agent-tool server)
 * with a Toxiproxy link between each process and what it depends on, and one cell per (link, fault) plus process
 * kills and Redis restarts. Each cell runs paid calls (with and without Idempotency-Key) and a publish workflow across
 * the fault, heals it, and checks the invariants:
 *
 * - only documented answers (200, 402, 429, 502, 503; no 500, no hang past the client's 10 s);
 * - every 2xx billed exactly once and the books clean (test/helpers/books.ts), no key past its budget;
 * - every reservation released within 60 s;
 * - paid calls succeed again after the heal, and the workflow started during the fault completes.
 *
 * `runCell()` returns a row for the report rather than throwing, so one failing cell does not hide the others.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { rmSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { createPerson, type Person } from './accounts.js';
import { checkBooks, openReservations, type CallAnswer } from './books.js';
import { createTestDatabase, sql, type TestDatabase } from './db.js';
import { startDurableRedis, type DurableRedis } from './durable-redis.js';
import { http } from './http.js';
import { createLiveApi } from './listings.js';
import { call, CALL_TIMEOUT_MS, sleep, startLoad, tally, type PaidFixture, type Recorded } from './paid-load.js';
import { startProcess, type RunningProcess } from './processes.js';
import { createBudgetKeys, seedDatabase } from './seed.js';
import { NO_TEMPORAL, testRedisPrefix } from './services.js';
import { startStripeMock, type StripeMock } from './stripe-mock.js';
import { startTemporal } from './temporal.js';
import { FAULT_KINDS, startToxiproxy, type FaultKind, type Link, type Toxiproxy } from './toxiproxy.js';
import { startUpstream, type Upstream } from './upstream.js';

export const LINKS = [
  'gateway-redis',
  'gateway-postgres',
  'gateway-upstream',
  'worker-postgres',
  'control-stripe',
] as const;
export type LinkName = (typeof LINKS)[number];
export const PROCESS_FAULTS = [
  'sigkill-gateway',
  'sigkill-worker',
  'sigkill-mcp',
  'redis-restart',
  'redis-restart-empty',
] as const;
export type ProcessFault = (typeof PROCESS_FAULTS)[number];

export interface Cell {
  id: string;
  link: LinkName | 'process';
  fault: FaultKind | ProcessFault;
}

export const ALL_CELLS: Cell[] = [
  ...LINKS.flatMap((link) => FAULT_KINDS.map((fault) => ({ id: `${link}/${fault}`, link, fault }))),
  ...PROCESS_FAULTS.map((fault) => ({ id: `process/${fault}`, link: 'process' as const, fault })),
];

/** The cells `npm test` runs: one fault per link and the two restarts not covered by gateway-crash.test.ts. */
export const FAST_CELLS = [
  'gateway-redis/partition',
  'gateway-postgres/blackhole',
  'gateway-upstream/reset',
  'worker-postgres/partition',
  'control-stripe/latency',
  'process/sigkill-worker',
  'process/redis-restart-empty',
];

export interface CellResult {
  id: string;
  passed: boolean;
  calls: number;
  ok2xx: number;
  statuses: Record<string, number>;
  problems: string[];
  reservationsReleasedMs: number | null;
  workflow: string;
  durationMs: number;
}

const SECRETS_KEY = '5c'.repeat(32);
const PRICE = 2;
const TIGHT_BUDGET = 40;
const FAULT_MS = 4_000;
const BEFORE_MS = 1_000;
const AFTER_MS = 3_000;
const RELEASE_BOUND_MS = 60_000;
const WORKFLOW_BOUND_MS = 90_000;
const DOCUMENTED = new Set([200, 402, 429, 502, 503]);

export interface Matrix {
  run(cell: Cell): Promise<CellResult>;
  close(): Promise<void>;
}

interface Env {
  tox: Toxiproxy;
  redis: DurableRedis;
  db: TestDatabase;
  stripe: StripeMock;
  upstream: Upstream;
  links: Record<LinkName, Link>;
  temporalAddress: string;
  prefix: string;
  fixture: PaidFixture & { orgId: string };
  provider: Person;
  gateway: RunningProcess;
  worker: RunningProcess;
  api: RunningProcess;
  mcp: RunningProcess;
  /** Every answer of every cell so far (the books check covers the whole database). */
  answered: CallAnswer[];
}

const viaPort = (url: string, port: number) => url.replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${port}`);

function commonEnv(e: Pick<Env, 'temporalAddress' | 'prefix' | 'redis'>): Record<string, string> {
  return {
    REDIS_URL: e.redis.url,
    REDIS_KEY_PREFIX: e.prefix,
    TEMPORAL_ADDRESS: e.temporalAddress,
    SECRETS_KEY,
    UPSTREAM_ALLOW_PRIVATE: 'true',
    SHUTDOWN_GRACE_MS: '2000',
    DATABASE_POOL_MAX: '6',
    STRIPE_SECRET_KEY: 'sk_test_123',
    STRIPE_WEBHOOK_SECRET: 'whsec_fault_matrix',
    LOG_LEVEL: 'info',
  };
}

function gatewayEnv(e: Env): Record<string, string> {
  return {
    ...commonEnv(e),
    DATABASE_URL: viaPort(e.db.url, e.links['gateway-postgres'].port),
    REDIS_URL: `redis://127.0.0.1:${e.links['gateway-redis'].port}`,
    TEMPORAL_ADDRESS: NO_TEMPORAL,
    GATEWAY_UPSTREAM_TIMEOUT_MS: '1000',
    GATEWAY_CONNECT_TIMEOUT_MS: '500',
    GATEWAY_SWEEP_INTERVAL_MS: '300',
    GATEWAY_DRAIN_CLAIM_IDLE_MS: '2000',
    GATEWAY_DRAIN_CLAIM_INTERVAL_MS: '500',
    GATEWAY_RATE_LIMIT_PER_MIN: '1000000',
  };
}

const workerEnv = (e: Env) => ({
  ...commonEnv(e),
  DATABASE_URL: viaPort(e.db.url, e.links['worker-postgres'].port),
  STRIPE_API_BASE: `http://127.0.0.1:${e.links['control-stripe'].port}`,
});

const apiEnv = (e: Env) => ({
  ...commonEnv(e),
  DATABASE_URL: e.db.url,
  STRIPE_API_BASE: `http://127.0.0.1:${e.links['control-stripe'].port}`,
});

async function seed(e: Omit<Env, 'fixture' | 'provider' | 'gateway' | 'worker' | 'api' | 'mcp' | 'answered'>) {
  return seedDatabase(e.db.url, async (services) => {
    const provider = await createPerson(services);
    const api = await createLiveApi(services, {
      providerOrgId: provider.orgId,
      baseUrl: `http://127.0.0.1:${e.links['gateway-upstream'].port}`,
      endpoints: [{ method: 'GET', path: '/paid', priceCents: PRICE }],
    });
    const consumer = await createPerson(services);
    const keys = await createBudgetKeys(services, consumer.orgId, { main: 10_000_000, tight: TIGHT_BUDGET * 1_000 });
    await services.ledger.post({ orgId: consumer.orgId, kind: 'grant', amountCents: 10_000_000 });
    return {
      provider,
      fixture: { slug: api.slug, orgId: consumer.orgId, mainKey: keys.main, tightKey: keys.tight },
    };
  });
}

export async function startMatrix(): Promise<Matrix> {
  const tox = await startToxiproxy();
  const [redis, db, stripe, temporal] = await Promise.all([
    startDurableRedis(),
    createTestDatabase(),
    startStripeMock(),
    startTemporal(),
  ]);
  // A little latency, so calls are in flight (reserved, not yet settled) when a fault strikes.
  const upstream = await startUpstream((_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    }, 5);
  });
  const pgPort = Number(new URL(db.url).port || 5432);
  const links = {
    'gateway-redis': await tox.link('gateway-redis', `127.0.0.1:${redis.port}`),
    'gateway-postgres': await tox.link('gateway-postgres', `127.0.0.1:${pgPort}`),
    'gateway-upstream': await tox.link('gateway-upstream', `127.0.0.1:${upstream.port}`),
    'worker-postgres': await tox.link('worker-postgres', `127.0.0.1:${pgPort}`),
    'control-stripe': await tox.link('control-stripe', `127.0.0.1:${stripe.port}`),
  } satisfies Record<LinkName, Link>;
  const base = {
    tox,
    redis,
    db,
    stripe,
    upstream,
    links,
    temporalAddress: temporal.address,
    prefix: testRedisPrefix(),
  };
  const seeded = await seed(base);
  const partial = { ...base, ...seeded } as Env;
  const [gateway, worker, api, mcp] = await Promise.all([
    startProcess({ roles: ['gateway'], env: gatewayEnv(partial) }),
    startProcess({ roles: ['worker'], env: workerEnv(partial) }),
    startProcess({ roles: ['api'], env: apiEnv(partial) }),
    startProcess({ roles: ['mcp'], env: apiEnv(partial) }),
  ]);
  const env: Env = { ...partial, gateway, worker, api, mcp, answered: [] };

  return {
    run: (cell) => runCell(env, cell),
    async close() {
      for (const p of [env.gateway, env.worker, env.api, env.mcp]) await p.stop('SIGKILL').catch(() => undefined);
      await tox.stop();
      await upstream.close();
      await stripe.stop();
      await temporal.env.teardown().catch(() => undefined);
      await redis.stop();
      await db.drop();
    },
  };
}

/** A fresh draft API of the provider (through the control plane), ready to publish. */
async function draftApi(e: Env): Promise<string> {
  const slug = `fm-${randomBytes(4).toString('hex')}`;
  const res = await http(e.api.urls.api, 'POST', '/v1/provider/apis', {
    token: e.provider.session,
    body: {
      name: `Fault matrix ${slug}`,
      slug,
      summary: 'A listing published across a fault',
      base_url: `http://127.0.0.1:${e.links['gateway-upstream'].port}`,
      endpoints: [{ method: 'GET', path: '/paid', price_cents: 1 }],
    },
  });
  if (res.status !== 201) throw new Error(`draft API: ${res.status} ${res.text.slice(0, 300)}`);
  return res.body.data.api_id as string;
}

async function apiStatus(e: Env, apiId: string): Promise<string> {
  const [row] = await sql<{ status: string }>(e.db.url, 'select status from apis where id = $1', [apiId]);
  return row?.status ?? 'missing';
}

function publish(e: Env, apiId: string): Promise<number> {
  return fetch(`${e.api.urls.api}/v1/provider/apis/${apiId}/publish`, {
    method: 'POST',
    headers: { authorization: `Bearer ${e.provider.session}`, 'content-type': 'application/json' },
    body: JSON.stringify({ accept_terms: true }),
    signal: AbortSignal.timeout(120_000),
  }).then(
    async (r) => (await r.text(), r.status),
    () => 0,
  );
}

/** Restart a killed process with the same role and environment; the load follows the gateway's new address. */
async function restart(e: Env, which: 'gateway' | 'worker' | 'mcp'): Promise<RunningProcess> {
  const env = which === 'gateway' ? gatewayEnv(e) : which === 'worker' ? workerEnv(e) : apiEnv(e);
  // The agent-tool server comes back where its clients expect it (they resume their sessions there).
  const ports = which === 'mcp' ? { mcp: Number(new URL(e.mcp.urls.mcp).port) } : undefined;
  const p = await startProcess({ roles: [which], env, ports });
  e[which] = p;
  return p;
}

/**
 * Answers a cell may not have: anything undocumented. While a killed gateway is down (until its restart is ready),
 * calls get no answer at all (connection refused or reset): a load balancer's view of a dead backend, expected there.
 */
function undocumented(
  answers: readonly Recorded[],
  cell: Cell,
  window: { from: number; to: number } | null,
): Recorded[] {
  return answers.filter((a) => {
    if (DOCUMENTED.has(a.status)) return false;
    return !(a.status === 0 && cell.fault === 'sigkill-gateway' && window && a.at >= window.from && a.at <= window.to);
  });
}

async function reservationsReleased(e: Env): Promise<number | null> {
  const started = Date.now();
  while (Date.now() - started < RELEASE_BOUND_MS) {
    const open = await openReservations(e.redis.url, e.prefix).catch(() => null);
    if (open && open.length === 0) return Date.now() - started;
    await sleep(250);
  }
  return null;
}

/** Paid calls succeed again: polled until the first 200, then five in a row must be 200. */
async function recovered(e: Env, f: PaidFixture, seen: CallAnswer[]): Promise<string | null> {
  const started = Date.now();
  let last: CallAnswer & { error?: string } = { status: 0 };
  const one = async () => {
    const a = await call(e.gateway.urls.gateway, f.slug, f.mainKey, undefined);
    seen.push(a);
    return a;
  };
  while (Date.now() - started < 45_000) {
    last = await one();
    if (last.status === 200) {
      const five = await Promise.all(Array.from({ length: 5 }, one));
      const bad = five.filter((a) => a.status !== 200);
      return bad.length === 0 ? null : `after recovery: ${JSON.stringify(bad.map((a) => a.status))}`;
    }
    await sleep(250);
  }
  return `paid calls did not succeed again within 45 s (last ${last.status} ${last.code ?? last.error ?? ''})`;
}

async function applyFault(e: Env, cell: Cell): Promise<{ heal: () => Promise<void>; killedAt: number | null }> {
  if (cell.link !== 'process') {
    const link = e.links[cell.link];
    await link.fault(cell.fault as FaultKind);
    return { heal: () => link.heal(), killedAt: null };
  }
  const killedAt = Date.now();
  switch (cell.fault as ProcessFault) {
    case 'sigkill-gateway':
    case 'sigkill-worker':
    case 'sigkill-mcp': {
      const which = (cell.fault as string).slice('sigkill-'.length) as 'gateway' | 'worker' | 'mcp';
      await e[which].stop('SIGKILL');
      return { heal: async () => void (await restart(e, which)), killedAt };
    }
    case 'redis-restart':
      await e.redis.kill();
      return { heal: () => e.redis.restart(), killedAt };
    case 'redis-restart-empty':
      await e.redis.kill();
      for (const f of readdirSync(e.redis.dir)) rmSync(path.join(e.redis.dir, f), { recursive: true, force: true });
      return { heal: () => e.redis.restart(), killedAt };
  }
}

/** An agent's MCP session (SDK client) with the consumer's key; `rejoin()` resumes it on a new client. */
async function mcpSession(e: Env, sessionId?: string) {
  const transport = new StreamableHTTPClientTransport(new URL(`${e.mcp.urls.mcp}/mcp`), {
    sessionId,
    requestInit: { headers: { Authorization: `Bearer ${e.fixture.mainKey}` } },
    reconnectionOptions: {
      maxRetries: 0,
      initialReconnectionDelay: 1_000,
      maxReconnectionDelay: 1_000,
      reconnectionDelayGrowFactor: 1,
    },
  });
  const client = new Client({ name: 'fault-matrix-agent', version: '1.0.0' });
  client.onerror = () => undefined; // the GET stream ends when the process is killed
  await client.connect(transport);
  return { client, id: transport.sessionId! };
}

/** The agent-tool server killed mid-session: after the restart the same session lists tools again. */
async function mcpSurvives(e: Env, before: { id: string; client: Client }): Promise<string | null> {
  await before.client.close().catch(() => undefined);
  try {
    const again = await mcpSession(e, before.id);
    const tools = await again.client.listTools();
    await again.client.close().catch(() => undefined);
    return tools.tools.length > 0 ? null : 'the resumed MCP session lists no tools';
  } catch (err) {
    return `the MCP session did not survive the restart: ${(err as Error).message}`;
  }
}

async function runCell(e: Env, cell: Cell): Promise<CellResult> {
  const started = Date.now();
  const problems: string[] = [];
  const agent = cell.fault === 'sigkill-mcp' ? await mcpSession(e) : undefined;
  if (agent) await agent.client.listTools();
  await e.tox.resetAll();
  const apiId = await draftApi(e);
  const targets = [e.gateway.urls.gateway];
  const load = startLoad(targets, e.fixture, { concurrency: 8, idempotencyPrefix: `fm-${cell.id}` });
  let fault: Awaited<ReturnType<typeof applyFault>>;
  let publishing: Promise<number>;
  let checkout: Promise<{ status: number }> | undefined;
  const marks = { healedAt: Number.POSITIVE_INFINITY };
  try {
    await sleep(BEFORE_MS);
    fault = await applyFault(e, cell);
    publishing = publish(e, apiId);
    checkout =
      cell.link === 'control-stripe'
        ? http(e.api.urls.api, 'POST', '/v1/billing/checkout', {
            token: e.provider.session,
            body: { amount_cents: 1_000 },
          }).catch((err: Error) => ({ status: 0, text: err.message }))
        : undefined;
    await sleep(FAULT_MS);
    await fault.heal();
    marks.healedAt = Date.now();
    targets[0] = e.gateway.urls.gateway; // a restarted gateway listens elsewhere
    await sleep(AFTER_MS);
  } finally {
    // Whatever happened, the load stops here and its answers count in the books (a load left running would charge
    // calls nobody records).
    e.answered.push(...(await load.stop()));
  }
  const answers = load.answers;

  const down = fault.killedAt === null ? null : { from: fault.killedAt - CALL_TIMEOUT_MS, to: marks.healedAt };
  const bad = undocumented(answers, cell, down);
  if (bad.length > 0) problems.push(`undocumented answers: ${JSON.stringify(tally(bad))}`);
  if (checkout) {
    const c = await checkout;
    if (![200, 201, 502, 503].includes(c.status)) problems.push(`checkout during the fault: ${c.status}`);
  }
  const recovery = await recovered(e, e.fixture, e.answered);
  if (recovery) problems.push(recovery);
  const resumed = agent ? await mcpSurvives(e, agent) : null;
  if (resumed) problems.push(resumed);

  // The redis wipe loses the calls answered but not yet drained (docs/durability.md: Redis data lost): answers in
  // the second before the wipe count as lost answers for the books check.
  if (cell.fault === 'redis-restart-empty' && fault.killedAt !== null) {
    const killedAt = fault.killedAt;
    const lost = new Set(answers.filter((a) => a.at >= killedAt - 1_000 && a.at <= killedAt));
    e.answered = e.answered.map((a) => (lost.has(a as Recorded) ? { status: 0 } : a));
  }
  const books = await checkBooks(e.db.url, e.answered, { throwOnFailure: false, settleTimeoutMs: 60_000 });
  if (!books.ok) problems.push(...books.problems.map((p) => `books: ${p}`));
  const releasedMs = await reservationsReleased(e);
  if (releasedMs === null) problems.push(`reservations still open ${RELEASE_BOUND_MS / 1_000} s after the heal`);

  const publishStatus = await publishing;
  let status = await waitStatus(e, apiId, ['live'], publishStatus === 200 ? WORKFLOW_BOUND_MS : 2_000);
  let workflow = `publish answered ${publishStatus}, listing ${status}`;
  if (status !== 'live') {
    // A publish that failed because of the fault (the smoke test could not reach the upstream) must succeed now.
    const again = await publish(e, apiId);
    status = await waitStatus(e, apiId, ['live'], WORKFLOW_BOUND_MS);
    workflow += `; republished after the heal: ${again}, listing ${status}`;
    if (status !== 'live') problems.push(`publish did not complete after the heal (${workflow})`);
  }
  return {
    id: cell.id,
    passed: problems.length === 0,
    calls: answers.length,
    ok2xx: answers.filter((a) => a.status >= 200 && a.status < 300).length,
    statuses: tally(answers),
    problems,
    reservationsReleasedMs: releasedMs,
    workflow,
    durationMs: Date.now() - started,
  };
}

async function waitStatus(e: Env, apiId: string, want: string[], timeoutMs: number): Promise<string> {
  const started = Date.now();
  let status = await apiStatus(e, apiId);
  while (!want.includes(status) && Date.now() - started < timeoutMs) {
    await sleep(500);
    status = await apiStatus(e, apiId);
  }
  return status;
}
