// The all-in-one rows (issue 23: "the targets hold ... in the all-in-one `npm start`"): the marketplace started as
// `npm start` starts it (`node --import tsx scripts/start.ts all`, no DATABASE_URL or REDIS_URL, so embedded PGlite,
// in-process counters and the memory spend store, its own Temporal dev server from .tools/bin), in a throw-away
// DATA_DIR, then seeded the way a person would: a provider signs up, proves the address from the console mail,
// creates a listing on the nginx upstream with a paid (1 cent) and a free endpoint and publishes it (the workflow's
// smoke test calls the upstream); a consumer registers and an operator grants it credits (`scripts/admin.ts
// grant-credits`, handed to the running process over its operator socket, as `npm run admin` does).
//
// Rows: allinone_paid, allinone_free and allinone_replay (a fixed Idempotency-Key after one billed call). CPU is the
// one process and its children (the Temporal dev server); no Redis or Postgres process is charged, the stores run
// inside it. The second setup (issue 32: "in both all-in-one setups"), allinone_pg_redis_*: the same `npm start`
// with DATABASE_URL (a fresh database on the benchmark's Postgres) and REDIS_URL (a redis-server of its own), its
// Redis and Postgres charged to it as the gateway rows' are. Settings beyond npm start's: loopback upstreams allowed,
// the per-key rate limit at its maximum (as the gateway rows), warn-level logs (as the gateway rows), free ports;
// node's flags are npm start's (NPM_START_NODE_FLAGS). BENCH_SKIP_ALLINONE=1 leaves both out.
//
// verify(): the consumer's balance fell by exactly its billed calls (paid responses, within wrk's in-flight window,
// plus the replay's priming call) and `admin reconcile` finds the books balanced.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { execFileSync } from 'node:child_process';
import { createBenchDatabase } from '../bench-db.js';
import { startRedis } from './gateway-targets.js';
import { freePort, nodeTsArgs, startChild, waitForHttp, type ManagedChild } from './proc.js';
import { TARGET, type BenchTarget, type TrafficCount, type VerifyResult } from './types.js';

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = promisify(execFile);
const GRANT_CENTS = 1_000_000_000;
const SLUG = 'bench-allinone';
/** What a user's shell passes on; DATABASE_URL, REDIS_URL, TEMPORAL_ADDRESS and the rest are left out on purpose. */
const INHERITED = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'USER'];
/** Node's flags in `npm start` (scripts/start.sh's `exec node ...` line): the all-in-one rows run with the same. */
export const NPM_START_NODE_FLAGS: readonly string[] = [];

export interface AllInOne {
  targets: BenchTarget[];
  pid: number;
  /** Its event-loop stalls over 20 ms so far (event_loop_stalls_total on its /metrics). */
  stalls(): Promise<number>;
  /** Its garbage collections over 20 ms so far (gc_pauses_long_total): what part of the stalls were collections. */
  longGcs(): Promise<number>;
  verify(traffic: Record<string, TrafficCount>): Promise<VerifyResult>;
  stop(): Promise<void>;
}

interface Envelope {
  ok: boolean;
  data: Record<string, unknown>;
  error?: { code: string; message: string };
}

async function call(base: string, method: string, path: string, token?: string, body?: unknown): Promise<Envelope> {
  const res = await fetch(base + path, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 400)}`);
  return JSON.parse(text) as Envelope;
}

async function until<T>(what: string, timeoutMs: number, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`all-in-one: ${what} did not happen within ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** `embedded`: npm start's defaults (PGlite, in-process store); `pg_redis`: real Postgres and Redis. */
export type AllInOneSetup = 'embedded' | 'pg_redis';

const ROWS: Record<AllInOneSetup, { paid: string; free: string; replay: string }> = {
  embedded: { paid: TARGET.allinonePaid, free: TARGET.allinoneFree, replay: TARGET.allinoneReplay },
  pg_redis: { paid: TARGET.allinonePgPaid, free: TARGET.allinonePgFree, replay: TARGET.allinonePgReplay },
};

function postgresPids(): number[] {
  try {
    return execFileSync('pgrep', ['-x', 'postgres'], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export async function startAllInOne(upstreamUrl: string, setup: AllInOneSetup = 'embedded'): Promise<AllInOne | null> {
  if (process.env.BENCH_SKIP_ALLINONE === '1') return null;
  const rows = ROWS[setup];
  const root = await mkdtemp(join(tmpdir(), 'bench-allinone-'));
  const dataDir = join(root, 'data');
  const [api, gw, mcp, temporal, temporalUi, metricsPort] = await Promise.all([1, 2, 3, 4, 5, 6].map(() => freePort()));
  const env: NodeJS.ProcessEnv = {};
  for (const name of INHERITED) if (process.env[name]) env[name] = process.env[name];
  const stores =
    setup === 'pg_redis' ? { redis: await startRedis(), db: await createBenchDatabase('allinone') } : undefined;
  if (stores) Object.assign(env, { DATABASE_URL: stores.db.url, REDIS_URL: stores.redis.url });
  Object.assign(env, {
    DATA_DIR: dataDir,
    API_PORT: String(api),
    GATEWAY_PORT: String(gw),
    MCP_PORT: String(mcp),
    TEMPORAL_DEV_PORT: String(temporal),
    TEMPORAL_UI_PORT: String(temporalUi),
    // Its /metrics (as an operator would run it) carries event_loop_stalls_total for the stall probe.
    METRICS_PORT: String(metricsPort),
    UPSTREAM_ALLOW_PRIVATE: 'true',
    GATEWAY_RATE_LIMIT_PER_MIN: '1000000',
    LOG_LEVEL: 'warn',
  });
  let out = '';
  const child: ManagedChild = startChild(
    'allinone',
    process.execPath,
    [
      ...NPM_START_NODE_FLAGS,
      ...(process.env.BENCH_ALLINONE_NODE_ARGS ?? '').split(' ').filter(Boolean),
      ...nodeTsArgs(join(REPO_ROOT, 'scripts/start.ts')),
      'all',
    ],
    { cwd: REPO_ROOT, env, group: true, graceMs: 20_000, onStdout: (chunk) => (out += chunk) },
  );
  const stop = async () => {
    await child.stop();
    await rm(root, { recursive: true, force: true });
    await stores?.db.drop().catch(() => undefined);
  };
  try {
    const apiBase = `http://127.0.0.1:${api}`;
    const gatewayBase = `http://127.0.0.1:${gw}`;
    await waitForHttp(`${gatewayBase}/health`, child, 180_000);
    await until('"Marketplace is running"', 180_000, () =>
      Promise.resolve(out.includes('Marketplace is running') ? true : undefined),
    );

    // The provider: signs up, opens the verification link the console mailer printed, creates and publishes.
    const email = 'bench-provider@example.com';
    const since = out.length;
    const signup = await call(apiBase, 'POST', '/v1/signup', undefined, { email, name: 'Bench Provider' });
    const providerKey = signup.data.api_key as string;
    const token = await until('the verification mail', 20_000, () =>
      Promise.resolve(/verify-email\?token=([A-Za-z0-9_-]+)/.exec(out.slice(since))?.[1]),
    );
    await call(apiBase, 'POST', '/v1/auth/verify-email', undefined, { token });
    const created = await call(apiBase, 'POST', '/v1/provider/apis', providerKey, {
      name: 'Bench all-in-one quotes',
      slug: SLUG,
      summary: 'nginx upstream for the all-in-one rows of the gateway benchmark',
      base_url: upstreamUrl,
      endpoints: [
        { method: 'GET', path: '/v1/quote', price_cents: 1 },
        { method: 'GET', path: '/v1/status', price_cents: 0 },
      ],
    });
    const apiId = created.data.api_id as string;
    await call(apiBase, 'POST', `/v1/provider/apis/${apiId}/publish`, providerKey, { accept_terms: true });
    await until('the listing going live', 60_000, async () => {
      const got = await call(apiBase, 'GET', `/v1/provider/apis/${apiId}`, providerKey);
      return got.data.status === 'live' ? true : undefined;
    });

    // The consumer: an anonymous registration, then an operator's grant through the running process.
    const reg = await call(apiBase, 'POST', '/v1/register');
    const consumerKey = reg.data.api_key as string;
    const orgId = reg.data.org_id as string;
    await admin(env, ['grant-credits', orgId, String(GRANT_CENTS), '--reason', 'gateway benchmark']);

    const paidUrl = `${gatewayBase}/v1/proxy/${SLUG}/v1/quote?symbol=ACME`;
    const freeUrl = `${gatewayBase}/v1/proxy/${SLUG}/v1/status`;
    const auth = { authorization: `Bearer ${consumerKey}` };
    const replayHeaders = { ...auth, 'idempotency-key': 'bench-allinone-replay' };
    // The catalog cache may take a moment to see the new listing: the first paid call is the replay's priming.
    await until('the first paid call', 30_000, async () => {
      const res = await fetch(paidUrl, { headers: replayHeaders });
      await res.arrayBuffer();
      return res.status === 200 ? true : undefined;
    });
    const balance = async () =>
      Number((await call(apiBase, 'GET', '/v1/billing/balance', consumerKey)).data.credit_cents);
    const startBalance = await settledBalance(balance);

    // The gateway's own event loop: the gateway thread's series when `npm start` runs one (thread="gateway",
    // gateway/thread.ts), else the process's.
    const metric = async (name: string) => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const line =
        new RegExp(`^${name}\\{thread="gateway"\\} (\\d+)`, 'm').exec(text) ??
        new RegExp(`^${name} (\\d+)`, 'm').exec(text);
      if (!line) throw new Error(`all-in-one: no ${name} on /metrics`);
      return Number(line[1]);
    };
    const pids = () => [child.pid];
    const none = () =>
      stores
        ? { redis: stores.redis.pid === null ? [] : [stores.redis.pid], postgres: postgresPids() }
        : { redis: [], postgres: [] };
    return {
      pid: child.pid,
      stalls: () => metric('event_loop_stalls_total'),
      longGcs: () => metric('gc_pauses_long_total'),
      targets: [
        { name: rows.paid, url: paidUrl, headers: auth, pids, services: none },
        { name: rows.free, url: freeUrl, headers: auth, pids, services: none },
        { name: rows.replay, url: paidUrl, headers: replayHeaders, pids, services: none },
      ],
      async verify(traffic) {
        const paid = traffic[rows.paid] ?? { expected: 0, maybeInFlight: 0 };
        const endBalance = await settledBalance(balance);
        const spent = startBalance - endBalance;
        const reconcile = await admin(env, ['reconcile']).then(
          (stdout) => (JSON.parse(stdout) as { ok?: boolean }).ok === true,
          () => false,
        );
        const billedOk = spent >= paid.expected && spent <= paid.expected + paid.maybeInFlight;
        return {
          ok: billedOk && reconcile,
          details: {
            consumer_spent_cents: spent,
            paid_expected: paid.expected,
            paid_maybe_in_flight: paid.maybeInFlight,
            free_responses: traffic[rows.free]?.expected ?? 0,
            replay_responses: traffic[rows.replay]?.expected ?? 0,
            reconcile_ok: reconcile,
          },
        };
      },
      stop,
    };
  } catch (err) {
    const tail = out.slice(-3_000) + child.tail().slice(-2_000);
    await stop();
    throw new Error(`all-in-one start failed: ${(err as Error).message}\n--- its output ---\n${tail}`, { cause: err });
  }
}

/** `npm run admin -- <args>` against the data folder: the script hands the command to the running process. */
async function admin(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [...nodeTsArgs(join(REPO_ROOT, 'scripts/admin.ts')), ...args], {
    cwd: REPO_ROOT,
    env,
    timeout: 120_000,
  });
  return stdout;
}

/** The balance once settlement has caught up: the same figure twice, a second apart. */
async function settledBalance(read: () => Promise<number>): Promise<number> {
  let last = await read();
  for (let i = 0; i < 30; i++) {
    await sleep(1_000);
    const now = await read();
    if (now === last) return now;
    last = now;
  }
  return last;
}
