// What a call costs Postgres, without the rest of the gateway around it (issue 32, target 3): the usage committer's
// real statement (core/spend/usage-commit-statement.ts) on a migrated throw-away database, batches of BATCH calls
// (the drain's commit size at capacity), Postgres's CPU per call read from /proc over every server process; beside it
// the floor row's write (bench/gateway/floor-proxy.ts: one multi-row insert into a one-index table) measured the
// same way. Deterministic enough to compare two versions of the write path on a noisy machine, which the capacity
// rows are not. `npx tsx bench/gateway/commit-cost.ts [paid|free] [batch] [batches]`.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { loadConfig } from '../../core/config.js';
import { newId } from '../../core/ids.js';
import { UsageCommitter, type CallRecord } from '../../core/spend/usage-committer.js';
import { Api, Endpoint, Org } from '../../db/entities/index.js';
import { createServices } from '../../platform/services.js';
import { benchEnv, createBenchDatabase } from '../bench-db.js';
import { CLK_TCK, snapshot } from './cpu.js';

const kind = (process.argv[2] ?? 'paid') as 'paid' | 'free';
const BATCH = Number(process.argv[3] ?? 60);
const BATCHES = Number(process.argv[4] ?? 300);
const KEYS = Number(process.env.COMMIT_COST_KEYS ?? 1);

/** CPU ticks of every postgres process (the server and its backends, the WAL writer, autovacuum). */
function postgresUs(): number {
  const snap = snapshot();
  let ticks = 0;
  for (const p of snap.procs.values()) if (p.comm === 'postgres') ticks += p.ticks;
  return (ticks * 1e6) / CLK_TCK;
}

const db = await createBenchDatabase('commit');
try {
  const url = process.env.COMMIT_COST_PG_OPTIONS
    ? `${db.url}?options=${encodeURIComponent(process.env.COMMIT_COST_PG_OPTIONS)}`
    : db.url;
  const env = benchEnv(url, { url: 'redis://127.0.0.1:6379', prefix: `commit:${db.suffix}:` }, '5b'.repeat(32), 1e6);
  const services = await createServices(loadConfig(env));
  const em = services.orm.em.fork();
  const provider = em.create(Org, { id: newId('org'), kind: 'standard', name: 'Provider' });
  const consumer = em.create(Org, { id: newId('org'), kind: 'standard', name: 'Consumer' });
  const api = em.create(Api, {
    id: newId('api'),
    org: provider,
    name: 'Quotes',
    slug: 'commit-quotes',
    summary: 'commit cost',
    baseUrl: 'http://127.0.0.1:9',
    status: 'live',
    publishedAt: new Date(),
  });
  const endpoint = em.create(Endpoint, { id: newId('endpoint'), api, method: 'GET', path: '/q', priceCents: 1 });
  const keys = Array.from({ length: KEYS }, (_, i) =>
    services.keys.create(em, { orgId: consumer.id, name: `k${i}`, scopes: ['proxy:call'], source: 'api' }),
  );
  await em.flush();
  await services.ledger.post({ orgId: consumer.id, kind: 'grant', amountCents: 1_000_000_000, memo: 'bench' });

  const committer = new UsageCommitter({
    orm: services.orm,
    logger: services.logger,
    feePercent: services.config.billing.platformFeePercent,
    prepared: true,
  });
  const price = kind === 'paid' ? 1 : 0;
  let n = 0;
  const call = (): CallRecord => {
    const at = new Date();
    n += 1;
    return {
      usageId: newId('usage'),
      orgId: consumer.id,
      keyId: keys[n % KEYS]!.key.id,
      apiId: api.id,
      apiSlug: api.slug,
      endpointId: endpoint.id,
      providerOrgId: provider.id,
      method: 'GET',
      path: '/q',
      status: 200,
      outcome: 'success',
      priceCents: price,
      priceCentsEffective: price,
      latencyMs: 0.8,
      idempotencyKey: null,
      requestId: newId('request'),
      day: at.toISOString().slice(0, 10),
      at,
      creditAppliedCents: price,
      billableCents: 0,
    };
  };
  if (process.env.COMMIT_COST_EXPLAIN === '1') {
    const { commitJson, COMMIT_STATEMENT } = await import('../../core/spend/usage-commit-statement.js');
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    for (let i = 0; i < 3; i++) {
      const json = commitJson(
        Array.from({ length: BATCH }, () => ({ call: call() })),
        services.config.billing.platformFeePercent,
      );
      const plan = await c.query(`explain (analyze, timing on) ${COMMIT_STATEMENT.replace('?::jsonb', '$1::jsonb')}`, [
        json,
      ]);
      if (i === 2) console.log(plan.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n'));
    }
    await c.end();
  }
  const batch = () => Promise.all(Array.from({ length: BATCH }, () => committer.commit(call())));
  for (let i = 0; i < 30; i++) await batch(); // warm: the prepared statement, the caches

  const floor = new pg.Client({ connectionString: db.url });
  await floor.connect();
  await floor.query(
    `create table floor_usage (id text primary key, org_id text not null, key_id text not null,
       cost_cents integer not null, record text not null, created_at timestamptz not null default now())`,
  );
  const floorBatch = () => {
    const rows = Array.from({ length: BATCH }, () => {
      const c = call();
      return [
        c.usageId,
        c.orgId,
        c.keyId,
        String(c.priceCents),
        JSON.stringify([c.usageId, c.orgId, c.keyId, 1, c.apiSlug, 'GET', '/q', 200]),
      ];
    });
    const values = rows.map((_, i) => `($${i * 5 + 1}, $${i * 5 + 2}, $${i * 5 + 3}, $${i * 5 + 4}, $${i * 5 + 5})`);
    return floor.query(
      `insert into floor_usage (id, org_id, key_id, cost_cents, record) values ${values.join(', ')}`,
      rows.flatMap((r) => [r[0], r[1], r[2], Number(r[3]), r.join(',')]),
    );
  };
  for (let i = 0; i < 30; i++) await floorBatch();

  const measure = async (fn: () => Promise<unknown>) => {
    await sleep(200);
    const before = postgresUs();
    for (let i = 0; i < BATCHES; i++) await fn();
    await sleep(200); // the WAL writer's share
    return (postgresUs() - before) / (BATCHES * BATCH);
  };
  // Interleaved, three times each, medians: the machine's drift hits both alike.
  const ours: number[] = [];
  const floors: number[] = [];
  for (let r = 0; r < 3; r++) {
    ours.push(await measure(batch));
    floors.push(await measure(floorBatch));
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
  console.log(
    JSON.stringify({
      kind,
      batch: BATCH,
      keys: KEYS,
      postgres_us_per_call: Math.round(med(ours) * 10) / 10,
      floor_postgres_us_per_call: Math.round(med(floors) * 10) / 10,
      ratio: Math.round((med(ours) / med(floors)) * 100) / 100,
      rounds: { ours: ours.map((x) => Math.round(x * 10) / 10), floor: floors.map((x) => Math.round(x * 10) / 10) },
    }),
  );
  await floor.end();
  await services.close();
} finally {
  await db.drop();
}
process.exit(0);
