// `npm run soak`: the marketplace under a steady, realistic mix for SOAK_MINUTES (default 30) at SOAK_RATE requests
// per second (default 60): catalog searches and listing details, paid and free gateway calls, replays, key changes, a
// few registrations and top-ups. The control plane and the gateway run as their own processes (scripts/start.ts) on
// a throw-away database and Redis prefix, with METRICS_PORT set; every 10 s the driver samples each process's
// resident memory and event-loop delay p99 (from /metrics) and the window's answers. At the end it reports:
//
// - answers by kind and status; any status outside 2xx, 402 and 429 is an error;
// - memory and event-loop-delay slopes per hour (least squares over the samples after the first 10%: warm-up);
// - Postgres (the database) and Redis (the prefix's keys) bytes per million calls;
// - the books check (test/helpers/books.ts) over every gateway answer.
//
// Results: bench/results/soak-<date>.json and .md. The open-model scheduler sends on time whatever the answers do, so
// a slow system shows as latency and errors, not as a lower rate.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Agent, request } from 'undici';
import { SCOPES } from '../../core/auth/scopes.js';
import { loadConfig } from '../../core/config.js';
import { RedisCounterStore } from '../../core/counters/index.js';
import { newId } from '../../core/ids.js';
import { createServices, type Services } from '../../platform/services.js';
import { Api, Endpoint, Org, User } from '../../db/entities/index.js';
import { benchEnv, createBenchDatabase, BENCH_ADMIN_URL } from '../bench-db.js';
import { checkBooks, type CallAnswer } from '../../test/helpers/books.js';
import { startUpstream } from '../gateway/nginx.js';
import { freePort, nodeTsArgs, startChild, stopAllChildren, waitForHttp, type ManagedChild } from '../gateway/proc.js';

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const RATE = Number(process.env.SOAK_RATE ?? 60);
const SAMPLE_MS = 10_000;
const SECRETS_KEY = '6d'.repeat(32);
const CONSUMER_KEYS = 20;
const WORDS = ['weather', 'quotes', 'stock', 'maps', 'translate', 'news', 'cats', 'email', 'payments', 'search'];

/** The mix: kind → share of requests. */
const MIX: [Kind, number][] = [
  ['paid', 0.38],
  ['replay', 0.08],
  ['free', 0.1],
  ['search', 0.2],
  ['detail', 0.14],
  ['key_change', 0.06],
  ['register', 0.02],
  ['top_up', 0.02],
];
type Kind = 'paid' | 'replay' | 'free' | 'search' | 'detail' | 'key_change' | 'register' | 'top_up';
const EXPECTED = (status: number) => (status >= 200 && status < 300) || status === 402 || status === 429;

interface Seed {
  slug: string;
  consumerOrgId: string;
  session: string;
  keys: { id: string; plaintext: string }[];
}

interface Sample {
  at: number;
  calls: number;
  errors: number;
  rss: Record<string, number>;
  eldP99Ms: Record<string, number>;
  p99Ms: number;
}

async function seed(services: Services, upstreamUrl: string): Promise<Seed> {
  const em = services.orm.em.fork();
  const provider = em.create(Org, { id: newId('org'), kind: 'standard', name: 'Soak provider' });
  const consumer = em.create(Org, { id: newId('org'), kind: 'standard', name: 'Soak consumer' });
  const user = em.create(User, {
    id: newId('user'),
    org: consumer,
    email: `soak-${consumer.id}@example.com`,
    role: 'owner',
    emailVerifiedAt: new Date(),
  });
  const slug = `soak-${randomBytes(3).toString('hex')}`;
  const api = em.create(Api, {
    id: newId('api'),
    org: provider,
    name: 'Soak quotes',
    slug,
    summary: 'Stock quotes for the soak test',
    baseUrl: upstreamUrl,
    status: 'live',
    publishedAt: new Date(),
  });
  em.create(Endpoint, { id: newId('endpoint'), api, method: 'GET', path: '/v1/quote', priceCents: 1 });
  em.create(Endpoint, { id: newId('endpoint'), api, method: 'GET', path: '/v1/status', priceCents: 0 });
  const keys = Array.from({ length: CONSUMER_KEYS }, (_, i) =>
    services.keys.create(em, {
      orgId: consumer.id,
      name: `soak-${i}`,
      scopes: SCOPES,
      source: 'api',
      budgetCents: 50_000_000,
    }),
  );
  const session = services.sessions.create(em, { userId: user.id, orgId: consumer.id });
  await em.flush();
  await services.ledger.post({ orgId: consumer.id, kind: 'grant', amountCents: 100_000_000, memo: 'soak' });
  return {
    slug,
    consumerOrgId: consumer.id,
    session: session.token,
    keys: keys.map((k) => ({ id: k.key.id, plaintext: k.plaintext })),
  };
}

function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

async function eldP99Ms(metricsUrl: string): Promise<number> {
  try {
    const res = await request(metricsUrl);
    const text = await res.body.text();
    return Number(/^nodejs_eventloop_lag_p99_seconds\s+([\d.e+-]+)/m.exec(text)?.[1] ?? NaN) * 1000;
  } catch {
    return NaN;
  }
}

/** Least-squares slope of y over x (per hour of x in ms). */
function slopePerHour(points: { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const num = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  return den === 0 ? 0 : (num / den) * 3_600_000;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

async function main(): Promise<void> {
  const db = await createBenchDatabase('soak');
  const databaseUrl = db.url;
  const prefix = `soak:${db.suffix}:`;
  const admin = new pg.Client({ connectionString: BENCH_ADMIN_URL });
  await admin.connect();

  const upstream = await startUpstream();
  const env = benchEnv(databaseUrl, { url: REDIS_URL, prefix }, SECRETS_KEY, 100_000);
  const services = await createServices(loadConfig(env));
  const s = await seed(services, upstream.url);
  const ports = { api: await freePort(), gateway: await freePort() };
  const metricsPorts = { api: await freePort(), gateway: await freePort() };
  const children: Record<string, ManagedChild> = {};
  for (const role of ['api', 'gateway'] as const) {
    children[role] = startChild(role, process.execPath, [...nodeTsArgs(join(REPO_ROOT, 'scripts/start.ts')), role], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        ...env,
        API_PORT: String(ports.api),
        GATEWAY_PORT: String(ports.gateway),
        MCP_PORT: '0',
        METRICS_PORT: String(metricsPorts[role]),
      },
    });
  }
  const api = `http://127.0.0.1:${ports.api}`;
  const gateway = `http://127.0.0.1:${ports.gateway}`;
  await waitForHttp(`${api}/health`, children.api!, 60_000);
  await waitForHttp(`${gateway}/health`, children.gateway!, 60_000);

  const dispatcher = new Agent({ connections: 64, pipelining: 1 });
  const answers: CallAnswer[] = [];
  const byKind = new Map<string, number>();
  const replayKeys: { key: string; idem: string }[] = [];
  let windowLatencies: number[] = [];
  let calls = 0;
  let errors = 0;
  const errorSamples: string[] = [];

  const send = async (kind: Kind): Promise<void> => {
    const key = s.keys[Math.floor(Math.random() * s.keys.length)]!;
    const started = performance.now();
    let status = 0;
    let body = '';
    try {
      const go = async (url: string, init: Parameters<typeof request>[1] = {}) => {
        const res = await request(url, { dispatcher, headersTimeout: 30_000, bodyTimeout: 30_000, ...init });
        status = res.statusCode;
        body = await res.body.text();
      };
      const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
      switch (kind) {
        case 'paid': {
          const idem = Math.random() < 0.3 ? `soak-${randomBytes(8).toString('hex')}` : undefined;
          await go(`${gateway}/v1/proxy/${s.slug}/v1/quote?symbol=ACME`, {
            headers: { ...bearer(key.plaintext), ...(idem ? { 'idempotency-key': idem } : {}) },
          });
          if (idem && status === 200) {
            replayKeys.push({ key: key.plaintext, idem });
            if (replayKeys.length > 500) replayKeys.shift();
          }
          break;
        }
        case 'replay': {
          const r = replayKeys[Math.floor(Math.random() * replayKeys.length)];
          if (!r) return send('paid');
          await go(`${gateway}/v1/proxy/${s.slug}/v1/quote?symbol=ACME`, {
            headers: { ...bearer(r.key), 'idempotency-key': r.idem },
          });
          break;
        }
        case 'free':
          await go(`${gateway}/v1/proxy/${s.slug}/v1/status`, { headers: bearer(key.plaintext) });
          break;
        case 'search':
          await go(`${api}/v1/search?q=${WORDS[Math.floor(Math.random() * WORDS.length)]}&limit=20`);
          break;
        case 'detail':
          await go(`${api}/v1/apis/${s.slug}`);
          break;
        case 'key_change':
          await go(`${api}/v1/keys/${key.id}`, {
            method: 'PATCH',
            headers: { ...bearer(s.session), 'content-type': 'application/json' },
            body: JSON.stringify({ daily_cap_cents: 1_000_000 + Math.floor(Math.random() * 1_000) }),
          });
          break;
        case 'register':
          await go(`${api}/v1/register`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{}',
          });
          break;
        case 'top_up':
          await services.ledger.post({
            orgId: s.consumerOrgId,
            kind: 'grant',
            amountCents: 1_000,
            memo: 'soak top-up',
          });
          status = 200;
          break;
      }
    } catch (err) {
      body = (err as Error).message;
    }
    calls++;
    byKind.set(`${kind} ${status}`, (byKind.get(`${kind} ${status}`) ?? 0) + 1);
    windowLatencies.push(performance.now() - started);
    if (!EXPECTED(status)) {
      errors++;
      if (errorSamples.length < 20) errorSamples.push(`${kind} ${status} ${body.slice(0, 200)}`);
    }
    if (kind === 'paid' || kind === 'replay' || kind === 'free') {
      let meta: Record<string, unknown> = {};
      let code: string | undefined;
      try {
        const parsed = JSON.parse(body) as { meta?: Record<string, unknown>; error?: { code?: string } };
        meta = parsed.meta ?? {};
        code = parsed.error?.code;
      } catch {
        // not JSON
      }
      answers.push({
        status,
        requestId: meta.request_id as string | undefined,
        costCents: typeof meta.cost_cents === 'number' ? meta.cost_cents : undefined,
        replayed: meta.replayed === true,
        originalRequestId: meta.original_request_id as string | undefined,
        code,
      });
    }
  };

  const pick = (): Kind => {
    let r = Math.random();
    for (const [kind, share] of MIX) {
      if ((r -= share) <= 0) return kind;
    }
    return 'paid';
  };

  const pids = { api: children.api!.pid, gateway: children.gateway!.pid };
  const sizeOf = async () =>
    Number(
      ((await admin.query('select pg_database_size($1)::bigint as size', [db.name])).rows[0] as { size: string }).size,
    );
  const sizeBefore = await sizeOf();
  const samples: Sample[] = [];
  const started = Date.now();
  const endAt = started + MINUTES * 60_000;
  const inflight = new Set<Promise<void>>();
  let nextSample = started + SAMPLE_MS;
  let sent = 0;
  console.log(`soak: ${MINUTES} min at ${RATE} req/s against ${api} and ${gateway}`);
  while (Date.now() < endAt) {
    const due = Math.floor(((Date.now() - started) / 1000) * RATE);
    while (sent < due) {
      sent++;
      const p = send(pick()).finally(() => inflight.delete(p));
      inflight.add(p);
    }
    if (Date.now() >= nextSample) {
      nextSample += SAMPLE_MS;
      const sorted = windowLatencies.sort((a, b) => a - b);
      windowLatencies = [];
      const sample: Sample = {
        at: Date.now() - started,
        calls,
        errors,
        rss: { api: rssOf(pids.api), gateway: rssOf(pids.gateway) },
        eldP99Ms: {
          api: await eldP99Ms(`http://127.0.0.1:${metricsPorts.api}/metrics`),
          gateway: await eldP99Ms(`http://127.0.0.1:${metricsPorts.gateway}/metrics`),
        },
        p99Ms: percentile(sorted, 0.99),
      };
      samples.push(sample);
      console.log(
        `  ${(sample.at / 60_000).toFixed(1)} min: ${calls} calls, ${errors} errors, p99 ${sample.p99Ms.toFixed(1)} ms, ` +
          `rss api ${(sample.rss.api! / 2 ** 20).toFixed(0)} MB gateway ${(sample.rss.gateway! / 2 ** 20).toFixed(0)} MB, ` +
          `eld p99 api ${sample.eldP99Ms.api!.toFixed(1)} ms gateway ${sample.eldP99Ms.gateway!.toFixed(1)} ms`,
      );
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.allSettled([...inflight]);

  const books = await checkBooks(databaseUrl, answers, { throwOnFailure: false, settleTimeoutMs: 60_000 });
  const size = (await sizeOf()) - sizeBefore;
  if (!(services.counters instanceof RedisCounterStore)) throw new Error('the soak needs Redis');
  const redis = new Redis(REDIS_URL); // no key prefix: SCAN returns full names and MEMORY USAGE takes them as they are
  let redisBytes = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const k of keys) redisBytes += Number((await redis.call('MEMORY', 'USAGE', k)) ?? 0);
  } while (cursor !== '0');
  redis.disconnect();
  const gatewayCalls = answers.length;
  const steady = samples.slice(Math.floor(samples.length / 10));
  const slope = (f: (x: Sample) => number) => slopePerHour(steady.map((x) => ({ x: x.at, y: f(x) })));
  const report = {
    at: new Date().toISOString(),
    minutes: MINUTES,
    rate: RATE,
    calls,
    gatewayCalls,
    errors,
    errorSamples,
    answers: Object.fromEntries([...byKind.entries()].sort()),
    slopes: {
      rssApiMBPerHour: slope((x) => x.rss.api! / 2 ** 20),
      rssGatewayMBPerHour: slope((x) => x.rss.gateway! / 2 ** 20),
      eldP99ApiMsPerHour: slope((x) => x.eldP99Ms.api!),
      eldP99GatewayMsPerHour: slope((x) => x.eldP99Ms.gateway!),
    },
    storage: {
      postgresBytes: size,
      postgresBytesPerMillionCalls: (size / Math.max(1, gatewayCalls)) * 1e6,
      redisBytes,
      redisBytesPerMillionCalls: (redisBytes / Math.max(1, gatewayCalls)) * 1e6,
    },
    books: { ok: books.ok, problems: books.problems.slice(0, 20), usage: books.usage },
    samples,
  };
  const dir = join(REPO_ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const day = report.at.slice(0, 10);
  writeFileSync(join(dir, `soak-${day}.json`), `${JSON.stringify(report, null, 1)}\n`);
  writeFileSync(join(dir, `soak-${day}.md`), markdown(report));
  console.log(markdown(report));

  await dispatcher.close();
  await services.close();
  await stopAllChildren();
  await upstream.stop();
  await admin.end();
  await db.drop();
  process.exitCode = errors === 0 && books.ok ? 0 : 1;
}

function markdown(r: {
  at: string;
  minutes: number;
  rate: number;
  calls: number;
  gatewayCalls: number;
  errors: number;
  errorSamples: string[];
  answers: Record<string, number>;
  slopes: Record<string, number>;
  storage: Record<string, number>;
  books: { ok: boolean; problems: string[] };
}): string {
  const mb = (b: number) => `${(b / 2 ** 20).toFixed(1)} MB`;
  return `# Soak ${r.at}

${r.minutes} min at ${r.rate} req/s: ${r.calls} requests (${r.gatewayCalls} through the gateway), ${r.errors} errors
(anything but 2xx, 402, 429). Books check: ${r.books.ok ? 'clean' : `**${r.books.problems.length} problems**`}.

| slope (after the first 10%) | per hour |
|---|---|
| control plane resident memory | ${r.slopes.rssApiMBPerHour!.toFixed(2)} MB |
| gateway resident memory | ${r.slopes.rssGatewayMBPerHour!.toFixed(2)} MB |
| control plane event-loop delay p99 | ${r.slopes.eldP99ApiMsPerHour!.toFixed(2)} ms |
| gateway event-loop delay p99 | ${r.slopes.eldP99GatewayMsPerHour!.toFixed(2)} ms |

| storage | total | per million gateway calls |
|---|---|---|
| Postgres (the database's growth) | ${mb(r.storage.postgresBytes!)} | ${mb(r.storage.postgresBytesPerMillionCalls!)} |
| Redis (the prefix's keys) | ${mb(r.storage.redisBytes!)} | ${mb(r.storage.redisBytesPerMillionCalls!)} |

Answers by kind and status:

${Object.entries(r.answers)
  .map(([k, v]) => `- ${k}: ${v}`)
  .join('\n')}
${r.errorSamples.length ? `\nError samples:\n\n${r.errorSamples.map((e) => `- ${e}`).join('\n')}\n` : ''}${
    r.books.problems.length ? `\nBooks problems:\n\n${r.books.problems.map((p) => `- ${p}`).join('\n')}\n` : ''
  }`;
}

main().catch(async (err: unknown) => {
  console.error(err);
  await stopAllChildren();
  process.exit(1);
});
