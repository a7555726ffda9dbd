// The gateway's rows of the benchmark: gateway_paid (a 1-cent endpoint, every call reserved, committed and billed),
// gateway_free (a 0-cent endpoint of the same listing, its own key: authenticated, rate-limited, recorded, not charged),
// gateway_429 (a key over its rate limit: refused by the one admission script before any spend) and gateway_replay
// (a fixed Idempotency-Key after one successful call: answered from the fast state, no upstream, no charge).
//
// The gateway runs as its own node process (scripts/start.ts gateway) against the machine's Postgres and Redis, on a
// throw-away database and Redis key prefix, with production-like settings (warn-level logs: the per-request info
// line is what an operator would turn off under load). verify() checks the books after the run: usage rows of the
// paid and the free key equal their successful responses (within wrk's in-flight window), the free ones cost 0, the replay and 429 keys wrote nothing
// beyond the priming call, no balance went negative and the ledger has no drift.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { request } from 'undici';
import { loadConfig } from '../../core/config.js';
import { RedisCounterStore } from '../../core/counters/index.js';
import { rateWindowKey } from '../../core/spend/redis-spend-store.js';
import { createServices, type Services } from '../../platform/services.js';
import { benchEnv, createBenchDatabase } from '../bench-db.js';
import { Api, Endpoint, Org, User } from '../../db/entities/index.js';
import { newId } from '../../core/ids.js';
import { Redis } from 'ioredis';
import { findBinary, freePort, nodeTsArgs, startChild, waitForHttp, type ManagedChild } from './proc.js';
import { TARGET, type GatewayTargets, type TrafficCount } from './types.js';

export interface GatewayTargetsContext {
  /** Base URL of the nginx upstream, e.g. http://127.0.0.1:41234 (no trailing slash). */
  upstreamUrl: string;
}

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/**
 * The gateway's own Redis: a redis-server the benchmark starts on a free port (no persistence, as the machine's), so
 * its CPU and its command counts are the gateway's alone; BENCH_REDIS_URL points at another one instead.
 */
export async function startRedis(): Promise<{ url: string; pid: number | null }> {
  if (process.env.BENCH_REDIS_URL) return { url: process.env.BENCH_REDIS_URL, pid: null };
  const port = await freePort();
  const child = startChild('redis', findBinary('redis-server'), [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
  ]);
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined); // not up yet: the connect() below says so
    const up = await probe.connect().then(
      () => true,
      () => false,
    );
    probe.disconnect();
    if (up) return { url, pid: child.pid };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`redis-server on port ${port} did not start`);
}
const SECRETS_KEY = '5b'.repeat(32);
const GRANT_CENTS = 1_000_000_000;
const SLUG = 'bench-quotes';
/** The free endpoint of the bench listing (the upstream answers every path alike). */
const FREE_PATH = '/v1/status';

function pids(name: string, oldestOnly = false): number[] {
  try {
    const out = execFileSync('pgrep', [...(oldestOnly ? ['-o'] : []), '-x', name], { encoding: 'utf8' });
    return out
      .split('\n')
      .filter(Boolean)
      .map((p) => Number(p));
  } catch {
    return [];
  }
}

export async function startGatewayTargets(ctx: GatewayTargetsContext): Promise<GatewayTargets | null> {
  if (process.env.BENCH_SKIP_GATEWAY === '1') return null;
  const redisServer = await startRedis();
  const REDIS_URL = redisServer.url;
  const db = await createBenchDatabase('bench');
  const databaseUrl = db.url;
  const prefix = `bench:${db.suffix}:`;

  const env = benchEnv(databaseUrl, { url: REDIS_URL, prefix }, SECRETS_KEY, 1_000_000);
  const services: Services = await createServices(loadConfig(env));
  const seed = await seedAccounts(services, ctx.upstreamUrl);

  // The 429 row's key is over its limit for the whole run: its rate windows for the next two hours are pre-filled.
  if (!(services.counters instanceof RedisCounterStore)) throw new Error('the benchmark needs Redis');
  const redis = services.counters.client;
  const minute = Math.floor(Date.now() / 60_000);
  for (let m = minute; m < minute + 120; m++) {
    await redis.set(rateWindowKey(seed.consumerOrgId, seed.limitedPrefix, m), '2000000000', 'PX', 3 * 3_600_000);
  }

  const extraGateways: ManagedChild[] = [];
  // Where the gateway writes a heap snapshot on SIGUSR2 (the memory row's retained-heap figure, extended.ts).
  const diagnosticDir = mkdtempSync(join(tmpdir(), 'bench-gateway-heap-'));
  const launch = async (processes: number) => {
    const port = await freePort();
    const child = startChild(
      processes > 1 ? `gateway-x${processes}` : 'gateway',
      process.execPath,
      // e.g. BENCH_GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/gateway-profile" profiles the gateway alone.
      [
        ...(process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean),
        ...(processes > 1 ? [] : ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${diagnosticDir}`]),
        ...nodeTsArgs(join(REPO_ROOT, 'scripts/start.ts')),
        'gateway',
        ...(processes > 1 ? ['--processes', String(processes)] : []),
      ],
      {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          ...env,
          GATEWAY_PORT: String(port),
          API_PORT: '0',
          MCP_PORT: '0',
        },
      },
    );
    const childBase = `http://127.0.0.1:${port}`;
    await waitForHttp(`${childBase}/health`, child, 60_000);
    return { child, base: childBase };
  };
  const { child: gateway, base } = await launch(1);
  const url = `${base}/v1/proxy/${SLUG}/v1/quote?symbol=ACME`;
  const freeUrl = `${base}/v1/proxy/${SLUG}${FREE_PATH}`;

  // Prime the replay key: one real, billed call; every later call with the same key is a replay.
  const primed = await request(url, {
    headers: { authorization: `Bearer ${seed.replayKey}`, 'idempotency-key': 'bench-replay' },
  });
  const primedBody = await primed.body.text();
  if (primed.statusCode !== 200) throw new Error(`priming the replay key failed: ${primed.statusCode} ${primedBody}`);

  const gatewayPids = () => [gateway.pid];
  return {
    targets: [
      { name: TARGET.gatewayPaid, url, headers: { authorization: `Bearer ${seed.paidKey}` }, pids: gatewayPids },
      {
        name: TARGET.gatewayFree,
        url: freeUrl,
        headers: { authorization: `Bearer ${seed.freeKey}` },
        pids: gatewayPids,
      },
      {
        name: TARGET.gateway429,
        url,
        headers: { authorization: `Bearer ${seed.limitedKey}` },
        expectedStatus: 429,
        pids: gatewayPids,
      },
      {
        name: TARGET.gatewayReplay,
        url,
        headers: { authorization: `Bearer ${seed.replayKey}`, 'idempotency-key': 'bench-replay' },
        pids: gatewayPids,
      },
    ],
    servicePids: () => ({
      redis: redisServer.pid === null ? pids('redis-server') : [redisServer.pid],
      postgres: pids('postgres', true),
    }),
    extended: {
      databaseUrl,
      redisUrl: REDIS_URL,
      redisPrefix: prefix,
      upstreamUrl: ctx.upstreamUrl,
      gatewayPid: gateway.pid,
      heapSnapshotDir: diagnosticDir,
      gatewayBase: base,
      paidKey: seed.paidKey,
      paidKeyId: seed.paidKeyId,
      async startGateway(processes: number) {
        const started = await launch(processes);
        extraGateways.push(started.child);
        // The multi-process gateway is ready once every worker answers; /health from one is not enough.
        await new Promise((r) => setTimeout(r, 3_000));
        return { base: started.base, pid: started.child.pid };
      },
    },
    async verify(traffic: Record<string, TrafficCount>) {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        const usage = await client.query<{ key_id: string; outcome: string; n: string; cost: string }>(
          `select key_id, outcome, count(*) as n, coalesce(sum(cost_cents), 0) as cost
             from usage_events group by key_id, outcome`,
        );
        const success = (keyId: string) => usage.rows.find((r) => r.key_id === keyId && r.outcome === 'success');
        const count = (keyId: string) => Number(success(keyId)?.n ?? 0);
        const within = (rows: number, t: TrafficCount | undefined) =>
          t ? rows >= t.expected && rows <= t.expected + t.maybeInFlight : true;
        const paid = traffic[TARGET.gatewayPaid];
        const paidRows = count(seed.paidKeyId);
        const paidOk = within(paidRows, paid);
        const free = traffic[TARGET.gatewayFree];
        const freeRows = count(seed.freeKeyId);
        const freeCost = Number(success(seed.freeKeyId)?.cost ?? 0);
        const freeOk = within(freeRows, free) && freeCost === 0;
        const replayRows = count(seed.replayKeyId);
        const limitedRows = count(seed.limitedKeyId);
        const failed = usage.rows.filter((r) => r.outcome !== 'success').reduce((s, r) => s + Number(r.n), 0);
        const org = await client.query<{ credit_cents: string }>('select credit_cents from orgs where id = $1', [
          seed.consumerOrgId,
        ]);
        const balance = Number(org.rows[0]?.credit_cents);
        const spent = paidRows + replayRows; // 1 cent each
        const drift = await client.query(
          `select o.id from orgs o left join (select org_id, sum(amount_cents) s from ledger_entries group by org_id) l
             on l.org_id = o.id where o.credit_cents <> coalesce(l.s, 0)`,
        );
        const negative = await client.query("select id from orgs where billing_mode = 'prepaid' and credit_cents < 0");
        const details = {
          paid_usage_rows: paidRows,
          paid_expected: paid?.expected ?? null,
          paid_maybe_in_flight: paid?.maybeInFlight ?? null,
          free_usage_rows: freeRows,
          free_expected: free?.expected ?? null,
          free_cost_cents: freeCost,
          replay_usage_rows: replayRows,
          limited_usage_rows: limitedRows,
          failed_usage_rows: failed,
          consumer_balance_cents: balance,
          consumer_balance_expected_cents: GRANT_CENTS - spent,
          orgs_with_drift: drift.rowCount,
          negative_prepaid_balances: negative.rowCount,
        };
        const ok =
          paidOk &&
          freeOk &&
          replayRows === 1 &&
          limitedRows === 0 &&
          balance === GRANT_CENTS - spent &&
          drift.rowCount === 0 &&
          negative.rowCount === 0;
        return { ok, details };
      } finally {
        await client.end();
      }
    },
    async stop() {
      await Promise.all(extraGateways.map((g) => g.stop()));
      await gateway.stop();
      rmSync(diagnosticDir, { recursive: true, force: true });
      const keys = await redis.keys(`${prefix}*`).catch(() => [] as string[]);
      for (let i = 0; i < keys.length; i += 500) {
        await redis.del(...keys.slice(i, i + 500).map((k) => k.slice(prefix.length)));
      }
      await services.close();
      await db.drop();
    },
  };
}

async function seedAccounts(services: Services, upstreamUrl: string) {
  const em = services.orm.em.fork();
  const provider = em.create(Org, { id: newId('org'), kind: 'standard', name: 'Bench provider' });
  const consumer = em.create(Org, { id: newId('org'), kind: 'standard', name: 'Bench consumer' });
  em.create(User, { id: newId('user'), org: consumer, email: `bench-${consumer.id}@example.com`, role: 'owner' });
  const api = em.create(Api, {
    id: newId('api'),
    org: provider,
    name: 'Bench quotes',
    slug: SLUG,
    summary: 'nginx upstream for the gateway benchmark',
    baseUrl: upstreamUrl,
    status: 'live',
    publishedAt: new Date(),
  });
  em.create(Endpoint, { id: newId('endpoint'), api, method: 'GET', path: '/v1/quote', priceCents: 1 });
  em.create(Endpoint, { id: newId('endpoint'), api, method: 'GET', path: FREE_PATH, priceCents: 0, position: 1 });
  const make = (name: string) =>
    services.keys.create(em, { orgId: consumer.id, name, scopes: ['proxy:call'], source: 'api' });
  const paid = make('paid');
  const limited = make('limited');
  const replay = make('replay');
  const free = make('free');
  await em.flush();
  await services.ledger.post({ orgId: consumer.id, kind: 'grant', amountCents: GRANT_CENTS, memo: 'benchmark' });
  return {
    consumerOrgId: consumer.id,
    paidKey: paid.plaintext,
    paidKeyId: paid.key.id,
    limitedKey: limited.plaintext,
    limitedKeyId: limited.key.id,
    limitedPrefix: limited.key.keyPrefix,
    replayKey: replay.plaintext,
    replayKeyId: replay.key.id,
    freeKey: free.plaintext,
    freeKeyId: free.key.id,
  };
}
