// Crash tests of the gateway's money path with real processes, each ending with the books check
// (test/helpers/books.ts): concurrent paid calls (with and without Idempotency-Key, some keys reused so replays
// happen) while (a) one of two gateway processes is SIGKILLed, (b) Redis is SIGKILLed and restarted from its AOF,
// (c) Postgres is SIGKILLed and restarted (crash recovery). Every answer is recorded; only documented statuses may
// appear, paid calls succeed again after the restart, no reservation stays open, and the books balance.
// Usage rows are always awaited (polled), never assumed present the instant a 2xx arrives.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerson } from '../../helpers/accounts.js';
import { checkBooks, openReservations, type OpenReservation } from '../../helpers/books.js';
import { call, CALL_TIMEOUT_MS, sleep, startLoad, tally, type Recorded } from '../../helpers/paid-load.js';
import { createTestDatabase, sql, type TestDatabase } from '../../helpers/db.js';
import { startDurableRedis, type DurableRedis } from '../../helpers/durable-redis.js';
import { waitFor } from '../../helpers/ports.js';
import { startProcess, type RunningProcess } from '../../helpers/processes.js';
import { startScratchPostgres } from '../../helpers/scratch-postgres.js';
import { createBudgetKeys, seedDatabase } from '../../helpers/seed.js';
import { NO_TEMPORAL, testRedisPrefix } from '../../helpers/services.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { createPaidApi } from '../../helpers/fixtures.js';

const SECRETS_KEY = '7e'.repeat(32);
const PRICE = 2;
const TIGHT_BUDGET = 40; // the small key's budget: it runs out during the load (402s), and must never be overspent
const SWEEP_BOUND_MS = 30_000; // reservation TTL (upstream timeout 1 s + 10 s margin) + sweeps, with room

/**
 * Defects of the current code these tests found, tolerated (narrowly, and reported with console.warn) so the tests
 * pass today; set an entry to false once its fix lands and the tests then hold the gateway to the full rule.
 *
 * - sweeperLeavesIdempotentSettled: gateway/sweeper.ts settles a committed-but-unsettled reservation with
 *   `idempotencyKey: null`, but the `sp:{N}:resv` member it must ZREM ends with the idempotency key
 *   (redis-spend-store.ts memberOf), so a reservation made with an Idempotency-Key is never removed: its hold stays
 *   counted in the org's and key's `res` forever and the sweeper "settles" it again every sweep.
 * - catalog500OnDatabaseOutage: a catalog reload that waits on Postgres (gateway/catalog-cache.ts, a listing older
 *   than twice its TTL) lets the database error through as 500 internal_error instead of 503 while Postgres is down or
 *   still recovering.
 */
const KNOWN_BUGS = { sweeperLeavesIdempotentSettled: false, catalog500OnDatabaseOutage: false };

interface Fixture {
  slug: string;
  orgId: string;
  mainKey: string;
  tightKey: string;
}

/** A paid listing behind `upstream`, a consumer with plenty of prepaid credit, a big-budget key and a tight one. */
async function seed(databaseUrl: string, upstream: Upstream): Promise<Fixture> {
  return seedDatabase(databaseUrl, async (services) => {
    const api = await createPaidApi(services, {
      baseUrl: upstream.url,
      endpoints: [{ method: 'GET', path: '/paid', priceCents: PRICE }],
    });
    const consumer = await createPerson(services);
    const keys = await createBudgetKeys(services, consumer.orgId, { main: 1_000_000, tight: TIGHT_BUDGET });
    await services.ledger.post({ orgId: consumer.orgId, kind: 'grant', amountCents: 1_000_000 });
    return { slug: api.slug, orgId: consumer.orgId, mainKey: keys.main, tightKey: keys.tight };
  });
}

function gatewayEnv(databaseUrl: string, redisUrl: string, prefix: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_MAX: '8',
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: prefix,
    TEMPORAL_ADDRESS: NO_TEMPORAL,
    SECRETS_KEY,
    UPSTREAM_ALLOW_PRIVATE: 'true',
    GATEWAY_UPSTREAM_TIMEOUT_MS: '1000',
    GATEWAY_SWEEP_INTERVAL_MS: '300',
    GATEWAY_RATE_LIMIT_PER_MIN: '1000000',
    SHUTDOWN_GRACE_MS: '2000',
  };
}

/** A few sequential paid calls before the load (a fresh process's first calls are slow); all must be 200. */
async function warmUp(bases: string[], f: Fixture): Promise<Recorded[]> {
  const seen: Recorded[] = [];
  for (const [target, base] of bases.entries()) {
    for (let i = 0; i < 3; i++) {
      seen.push({ ...(await call(base, f.slug, f.mainKey, undefined)), target, key: 'main', at: Date.now() });
    }
  }
  expect(tally(seen)).toEqual({ 200: seen.length });
  return seen;
}

/** After a fault: paid calls succeed again (polled until the first 200, then ten in a row must all be 200). */
async function expectRecovery(base: string, f: Fixture, timeoutMs: number): Promise<Recorded[]> {
  const seen: Recorded[] = [];
  const one = async (idem?: string) => {
    const a = { ...(await call(base, f.slug, f.mainKey, idem)), target: -1, key: 'main' as const, at: Date.now() };
    seen.push(a);
    return a;
  };
  await waitFor(async () => (await one()).status === 200, {
    timeoutMs,
    intervalMs: 250,
    what: `paid calls to succeed again (last answers: ${JSON.stringify(seen.slice(-3))})`,
  });
  const after = await Promise.all(
    Array.from({ length: 10 }, (_, i) => one(i % 2 ? `recovered-${randomBytes(4).toString('hex')}` : undefined)),
  );
  expect(tally(after)).toEqual({ 200: 10 });
  return seen;
}

/**
 * Every reservation is settled or voided within the sweep bound. With KNOWN_BUGS.sweeperLeavesIdempotentSettled, a
 * reservation that is committed (its success usage row exists), carries an Idempotency-Key and is 2 s past its expiry
 * counts as that known defect and is only reported.
 */
async function expectNoOpenReservations(redisUrl: string, prefix: string, databaseUrl: string): Promise<void> {
  let open: OpenReservation[] = [];
  let stuck: OpenReservation[] = [];
  const started = Date.now();
  while (Date.now() - started < SWEEP_BOUND_MS) {
    open = await openReservations(redisUrl, prefix).catch(() => open);
    const committed = new Set(
      open.length === 0
        ? []
        : (
            await sql<{ id: string }>(
              databaseUrl,
              "select id from usage_events where outcome = 'success' and id = any($1::text[])",
              [open.map((r) => r.reservationId)],
            )
          ).map((r) => r.id),
    );
    stuck = open.filter(
      (r) =>
        KNOWN_BUGS.sweeperLeavesIdempotentSettled &&
        r.idempotencyKey !== '' &&
        committed.has(r.reservationId) &&
        r.expiresAt < Date.now() - 2_000,
    );
    if (open.length === stuck.length) break;
    await sleep(250);
  }
  const left = open.filter((r) => !stuck.includes(r));
  expect(
    left.map((r) => `${r.key} ${r.member} (expired ${Date.now() - r.expiresAt} ms ago)`),
    `reservations still open ${SWEEP_BOUND_MS} ms after the load`,
  ).toEqual([]);
  if (stuck.length > 0) {
    console.warn(
      `KNOWN BUG sweeperLeavesIdempotentSettled: ${stuck.length} committed idempotent reservations never leave their set`,
    );
  }
}

/** Paid load on `gateway` across an outage: `fault` is killed 2.5 s into it and restarted 2 s later. */
async function acrossOutage(
  gateway: RunningProcess,
  f: Fixture,
  fault: { kill(): Promise<void>; restart(): Promise<void> },
) {
  const warm = await warmUp([gateway.urls.gateway], f);
  const load = startLoad([gateway.urls.gateway], f, { idempotencyPrefix: 'crash' });
  await sleep(2_500);
  const killedAt = Date.now();
  await fault.kill();
  await sleep(2_000);
  const restartedAt = Date.now();
  await fault.restart();
  const recovery = await expectRecovery(gateway.urls.gateway, f, 30_000);
  await sleep(1_500);
  const answers = await load.stop();
  return { warm, answers, recovery, killedAt, restartedAt };
}

/** Only documented answers (`extra` allows more), 503 while the outage lasted, a 200 after the restart. */
function expectOutageAnswers(
  { answers, recovery, killedAt, restartedAt }: Awaited<ReturnType<typeof acrossOutage>>,
  gateway: RunningProcess,
  extra?: (a: Recorded) => boolean,
): void {
  const bad = unexpected([...answers, ...recovery], [gateway], extra);
  expect(bad.slice(0, 10), JSON.stringify(tally(answers))).toEqual([]);
  const during = answers.filter((a) => a.at > killedAt + 200 && a.at < restartedAt);
  expect(during.filter((a) => a.status === 503).length, JSON.stringify(tally(during))).toBeGreaterThan(0);
  expect(answers.some((a) => a.status === 200 && a.at > restartedAt)).toBe(true);
}

/**
 * Only documented answers: 200, 402 (the tight key's budget), 429, 503, and 502 when the gateway blames the upstream
 * (it logged "upstream call failed" for that request: the loopback upstream shares this busy process and may miss
 * the 1 s upstream timeout). `extra` allows more for a case.
 */
function unexpected(
  answers: readonly Recorded[],
  gateways: readonly RunningProcess[],
  extra: (a: Recorded) => boolean = () => false,
): Recorded[] {
  const upstreamBlamed = (a: Recorded) =>
    a.status === 502 &&
    a.requestId !== undefined &&
    gateways.some((g) =>
      g
        .output()
        .split('\n')
        .some((line) => line.includes(`"request_id":"${a.requestId}"`) && line.includes('upstream call failed')),
    );
  const bad = answers.filter((a) => ![200, 402, 429, 503].includes(a.status) && !extra(a) && !upstreamBlamed(a));
  const blamed = answers.filter(upstreamBlamed).length;
  if (blamed > 0) console.warn(`${blamed} answers were 502 with the upstream to blame (timeout under load)`);
  return bad;
}

describe('gateway crash tests (real processes)', () => {
  let upstream: Upstream;
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    // A little latency, so calls are in flight (reserved, not yet committed) when something is killed.
    upstream = await startUpstream((_req, res) => {
      setTimeout(
        () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"ok":true}');
        },
        5 + Math.floor(Math.random() * 30),
      );
    });
  });
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await upstream?.close();
  });

  /** A test's own database (`open`ed, `close`d after the file), durable Redis and Redis prefix, seeded. */
  async function setUp<D extends { url: string }>(open: () => Promise<D>, close: (db: D) => Promise<unknown>) {
    const db = await open();
    cleanups.push(() => close(db));
    const redis: DurableRedis = await startDurableRedis();
    cleanups.push(() => redis.stop());
    const prefix = testRedisPrefix();
    const f = await seed(db.url, upstream);
    return { db, redis, prefix, f, env: gatewayEnv(db.url, redis.url, prefix) };
  }
  const testDatabase = () => setUp(createTestDatabase, (db) => db.drop());
  const scratchPostgres = () => setUp(startScratchPostgres, (pg) => pg.stop());

  async function startGateway(env: Record<string, string>): Promise<RunningProcess> {
    const gateway = await startProcess({ roles: ['gateway'], env });
    cleanups.push(() => gateway.stop('SIGKILL'));
    return gateway;
  }

  /** No reservation left open, then the books check over every answer; logs the report under `label`. */
  async function settle(
    { redis, prefix, db }: { redis: DurableRedis; prefix: string; db: { url: string } },
    answers: Recorded[],
    label: string,
    summary: Record<string, unknown>,
  ): Promise<void> {
    await expectNoOpenReservations(redis.url, prefix, db.url);
    const report = await checkBooks(db.url, answers);
    console.log(label, JSON.stringify({ ...summary, ...report, unannouncedCharges: undefined }));
  }

  /** `settle` after an outage run, its load's answers tallied in the log. */
  const settleOutage = (
    s: Parameters<typeof settle>[0],
    { warm, answers, recovery }: Awaited<ReturnType<typeof acrossOutage>>,
    label: string,
  ) => settle(s, [...warm, ...answers, ...recovery], label, { tally: tally(answers) });

  it('the books check catches what it is for (a planted unbooked 2xx, an unbatched charge, an undebited batch, a drifted balance)', async () => {
    const db: TestDatabase = await createTestDatabase();
    cleanups.push(() => db.drop());
    const f = await seed(db.url, upstream);
    const [key] = await sql<{ id: string }>(db.url, 'select id from api_keys where org_id = $1 limit 1', [f.orgId]);
    await sql(
      db.url,
      `insert into usage_events (id, org_id, key_id, api_slug, method, path, status, outcome, latency_ms, request_id,
         cost_cents) values ('use_planted', $1, $2, $3, 'GET', '/paid', 200, 'success', 1, 'req_planted', 2)`,
      [f.orgId, key!.id, f.slug],
    );
    // A batch whose ledger debit never got written, with its one call pointing at it.
    await sql(
      db.url,
      `insert into usage_batches (id, org_id, calls, charged_cents, credit_applied_cents, billable_cents,
         first_usage_id, last_usage_id, first_at, last_at)
       values ('ubt_planted', $1, 1, 3, 3, 0, 'use_batched', 'use_batched', now(), now())`,
      [f.orgId],
    );
    await sql(
      db.url,
      `insert into usage_events (id, org_id, key_id, api_slug, method, path, status, outcome, latency_ms, request_id,
         cost_cents, credit_applied_cents, batch_id)
       values ('use_batched', $1, $2, $3, 'GET', '/paid', 200, 'success', 1, 'req_batched', 3, 3, 'ubt_planted')`,
      [f.orgId, key!.id, f.slug],
    );
    await sql(db.url, 'update orgs set credit_cents = credit_cents + 1 where id = $1', [f.orgId]);
    const report = await checkBooks(db.url, [{ status: 200, requestId: 'req_never_booked', costCents: 2 }], {
      settleTimeoutMs: 2_000,
      throwOnFailure: false,
    });
    expect(report.ok).toBe(false);
    const text = report.problems.join('\n');
    expect(text).toContain('1 2xx answers have no success usage row: "req_never_booked"');
    expect(text).toContain('paid success rows in no batch: {"id":"use_planted"');
    expect(text).toMatch(/usage batches not tied to their books: \{"batch_id":"ubt_planted"/);
    expect(text).toContain('2 charged calls were never answered');
    expect(text).toContain('credit_cents is not their ledger sum');
    expect(text).toContain("keys whose spent_cents is not their calls' cost");
  }, 60_000);

  it('SIGKILL of one of two gateway processes mid-load: its reservations are swept, the books balance', async () => {
    const s = await testDatabase();
    const { f } = s;
    const gateways = await Promise.all([startGateway(s.env), startGateway(s.env)]);
    const [victim, survivor] = gateways;

    const warm = await warmUp([victim.urls.gateway, survivor.urls.gateway], f);
    const load = startLoad([victim.urls.gateway, survivor.urls.gateway], f, { idempotencyPrefix: 'crash' });
    await sleep(2_500);
    const killedAt = Date.now();
    await victim.stop('SIGKILL');
    load.retire(0);
    await sleep(3_000);
    const answers = await load.stop();

    // Lost answers only from the killed process, at the kill; everything else documented.
    const bad = unexpected(
      answers,
      gateways,
      (a) => a.status === 0 && a.target === 0 && a.at >= killedAt - CALL_TIMEOUT_MS,
    );
    expect(bad.slice(0, 10), JSON.stringify(tally(answers))).toEqual([]);
    expect(answers.filter((a) => a.status === 200 && a.target === 0).length).toBeGreaterThan(0);
    expect(answers.filter((a) => a.status === 200 && a.target === 1 && a.at > killedAt).length).toBeGreaterThan(10);
    expect(answers.some((a) => a.replayed)).toBe(true);

    const recovery = await expectRecovery(survivor.urls.gateway, f, 10_000);
    await settle(s, [...warm, ...answers, ...recovery], 'gateway kill:', { tally: tally(answers) });
  }, 150_000);

  it('SIGKILL of Redis mid-load, restarted from its AOF: 503 meanwhile, paid calls succeed after, the books balance', async () => {
    const s = await testDatabase();
    const gateway = await startGateway(s.env);
    const run = await acrossOutage(gateway, s.f, s.redis);
    expectOutageAnswers(run, gateway);
    await settleOutage(s, run, 'redis kill:');
  }, 150_000);

  it('SIGKILL of Postgres mid-load, restarted: only 503 meanwhile, paid calls succeed after, the books balance', async () => {
    const s = await scratchPostgres();
    const gateway = await startGateway(s.env);
    const run = await acrossOutage(gateway, s.f, s.db);
    const { answers, recovery, killedAt } = run;

    // Paid calls succeed again from the first 200 after the restart; until then only 503 (see KNOWN_BUGS for 500).
    const recoveredAt = recovery.find((a) => a.status === 200)!.at;
    const known500 = (a: Recorded) =>
      KNOWN_BUGS.catalog500OnDatabaseOutage &&
      a.status === 500 &&
      a.code === 'internal_error' &&
      a.at >= killedAt &&
      a.at <= recoveredAt;
    expectOutageAnswers(run, gateway, known500);
    const tolerated = [...answers, ...recovery].filter(known500).length;
    if (tolerated > 0)
      console.warn(`KNOWN BUG catalog500OnDatabaseOutage: ${tolerated} answers were 500 during the outage`);
    expect(gateway.child.exitCode).toBeNull(); // the gateway survived the outage

    await settleOutage(s, run, 'postgres kill:');
    const [row] = await sql<{ n: number }>(
      s.db.url,
      "select count(*)::int as n from usage_events where outcome = 'success'",
    );
    expect(row!.n).toBeGreaterThan(0);
  }, 150_000);

  it('SIGKILL of a drainer holding answered calls Postgres never got: another gateway claims and books them', async () => {
    const s = await scratchPostgres();
    const { f, db: pg } = s;
    const env = { ...s.env, GATEWAY_DRAIN_CLAIM_IDLE_MS: '500' };
    const drainer = await startGateway(env);

    const warm = await warmUp([drainer.urls.gateway], f);
    // Postgres goes away: the fast state still answers paid calls (durable in the usage stream), the drain retries.
    await pg.kill();
    const during: Recorded[] = [];
    for (let i = 0; i < 20; i++) {
      during.push({
        ...(await call(drainer.urls.gateway, f.slug, f.mainKey, undefined)),
        target: 0,
        key: 'main',
        at: Date.now(),
      });
    }
    const answered = during.filter((a) => a.status === 200);
    expect(answered.length, JSON.stringify(tally(during))).toBeGreaterThan(0);
    expect(unexpected(during, [drainer])).toEqual([]);
    // The drainer dies with those calls in its pending list; Postgres comes back; another gateway takes them over.
    await drainer.stop('SIGKILL');
    await pg.restart();
    const heir = await startGateway(env);
    const recovery = await expectRecovery(heir.urls.gateway, f, 30_000);
    await settle(s, [...warm, ...during, ...recovery], 'drainer kill:', { answered: answered.length });
    const ids = answered.map((a) => a.requestId!);
    const rows = await sql<{ n: number }>(
      pg.url,
      "select count(*)::int as n from usage_events where outcome = 'success' and request_id = any($1)",
      [ids],
    );
    expect(rows[0]!.n).toBe(ids.length);
  }, 150_000);
});
