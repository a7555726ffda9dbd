// Issue 21 item 14: on a healthy system a first-seen Idempotency-Key is answered from Redis alone (the org's seen set,
// stamped complete), while replays stay exact: a key past its 25 h Redis record, keys from before a loss of Redis's
// data, and calls booked in Postgres past the settle (an unknown settle outcome) all replay, never charge twice.
// Real Postgres, Redis and a loopback upstream; two gateway handlers stand for two gateway processes.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { Metrics } from '../../../core/metrics/metrics.js';
import type { RedisCounterStore } from '../../../core/counters/index.js';
import { RedisSpendStore } from '../../../core/spend/redis-spend-store.js';
import type { CallRecord } from '../../../core/spend/usage-committer.js';
import { newId } from '../../../core/ids.js';
import { idempotencyRecordKey, seenKey, seenStateKey } from '../../../core/spend/redis-spend-keys.js';
import { seenKeyHash, UNSYNCED_WAIT_MS } from '../../../core/spend/idempotency-seen.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { callRecord, createCommitter } from '../../helpers/call-records.js';
import { describe as show, expectFailure, http, serve } from '../../helpers/http.js';
import { createLiveApi, type LiveApi } from '../../helpers/listings.js';
import { waitFor } from '../../helpers/ports.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { createConsumer } from '../../helpers/fixtures.js';

describe('a first-seen Idempotency-Key is answered from Redis alone (issue 21 item 14)', () => {
  let stack: TestStack;
  let gateways: GatewayHandler[] = [];
  let servers: RunningHttpServer[] = [];
  let upstream: Upstream;
  let api: LiveApi;
  let metrics: Metrics[] = [];
  let provider: Person;
  const clock = new ManualClock(new Date('2026-11-27T12:00:00Z'));

  beforeAll(async () => {
    upstream = await startUpstream();
    stack = await createTestStack({ clock, env: { GATEWAY_RATE_LIMIT_PER_MIN: '100000' } });
    // Two processes: each its own admission state (replay memos, fast-path allowance, rebuilds) and metrics.
    metrics = [stack.services.metrics, new Metrics()];
    gateways = metrics.map((m) => createGatewayHandler({ ...stack.services, metrics: m }));
    servers = await Promise.all(gateways.map((g) => serve(g)));
    provider = await createPerson(stack.services);
    api = await createLiveApi(stack.services, {
      providerOrgId: provider.orgId,
      baseUrl: `${upstream.url}/api`,
      credential: { secret: 'provider-secret', injection: 'header', name: 'X-Api-Key' },
      endpoints: [{ method: 'POST', path: '/orders', priceCents: 5 }],
    });
  });
  afterAll(async () => {
    for (const g of gateways) await g.drain.flush();
    await stack?.services.earnings.foldAll();
    const report = await stack?.services.reconciliation.run();
    expect(report?.ok, JSON.stringify(report)).toBe(true);
    for (const s of servers) await s.close();
    for (const g of gateways) await g.close();
    await stack?.close();
    await upstream?.close();
  });

  const redis = () => (stack.services.counters as RedisCounterStore).client;
  async function consumer(credit: number): Promise<Person> {
    const p = await createConsumer(stack.services, credit);
    return p;
  }
  const order = (c: Person, key: string, n = 1, server = 0) =>
    http(servers[server]!.url, 'POST', `/v1/proxy/${api.slug}/orders`, {
      token: c.apiKey,
      body: { n },
      headers: { 'idempotency-key': key },
    });
  /** Postgres lookups of Idempotency-Keys before the upstream call, all reasons together. */
  const lookups = async () => {
    let sum = 0;
    for (const m of metrics) for (const v of (await m.idempotencyLookups.get()).values) sum += v.value;
    return sum;
  };
  const stamped = (orgId: string) =>
    waitFor(async () => ((await redis().hget(seenStateKey(orgId), 'ok')) === '1' ? true : undefined), {
      timeoutMs: 15_000,
    });
  /** The paid calls charged: the calls of the org's usage batches, whose debits add up to what the batches charged. */
  const debits = async (orgId: string) => {
    for (const g of gateways) await g.drain.flush();
    const [row] = await sql<{ calls: number; charged: number; debited: number }>(
      stack.db.url,
      `select coalesce(sum(calls), 0)::int as calls, coalesce(sum(charged_cents), 0)::int as charged,
              (select coalesce(-sum(amount_cents), 0)::int from ledger_entries where org_id = $1 and kind = 'usage')
                as debited
         from usage_batches where org_id = $1`,
      [orgId],
    );
    expect(row!.debited).toBe(row!.charged);
    return row!.calls;
  };
  /** Lose every key of the fast state (this test's prefix only: the Redis server is shared). */
  async function loseFastState(): Promise<void> {
    const prefix = stack.config.counters.keyPrefix;
    const keys = (await redis().keys(`${prefix}sp:*`)).map((k) => k.slice(prefix.length));
    if (keys.length > 0) await redis().del(...keys);
  }
  /**
   * Run `fn` while another session holds an exclusive lock on idempotency_records: any read of the table on the
   * request path would wait for the lock, so the calls could not answer in time.
   */
  async function withRecordsLocked<T>(fn: () => Promise<T>): Promise<T> {
    const locker = new pg.Client({ connectionString: stack.db.url });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table idempotency_records in access exclusive mode');
      return await fn();
    } finally {
      await locker.query('rollback').catch(() => undefined);
      await locker.end();
    }
  }
  const within = <T>(p: Promise<T>, ms: number) =>
    Promise.race([
      p,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms)),
    ]);

  it('on a healthy system first-seen keys cause no Postgres lookup, while replays stay exact', async () => {
    const c = await consumer(100);
    const first = await order(c, 'warm-up');
    expect(first.status, show(first)).toBe(200);
    await stamped(c.orgId); // the org's seen set, built once from Postgres
    const before = await lookups();
    const seen = upstream.seen.length;
    // With idempotency_records locked, a lookup would hang: every call still answers at once, on both processes.
    const answers = await withRecordsLocked(() =>
      within(Promise.all(Array.from({ length: 6 }, (_, i) => order(c, `fresh-${i}`, i, i % 2))), 5_000),
    );
    for (const a of answers) expect(a.status, show(a)).toBe(200);
    expect(await lookups()).toBe(before);
    expect(upstream.seen.length - seen).toBe(6);
    // Replays of those keys (from Redis) and a key reused for another request are as before.
    const again = await order(c, 'fresh-3', 3, 0);
    expect(again.body.meta, show(again)).toMatchObject({
      replayed: true,
      original_request_id: answers[3]!.body.meta.request_id,
    });
    expectFailure(await order(c, 'fresh-3', 99, 1), 422, 'idempotency_key_reused');
    expect(upstream.seen.length - seen).toBe(6);
    expect(await debits(c.orgId)).toBe(7);
  });

  it('a key whose 25 h Redis record expired still replays exactly: the seen set sends it to Postgres', async () => {
    const c = await consumer(100);
    const first = await order(c, 'old-order', 1);
    expect(first.status, show(first)).toBe(200);
    await stamped(c.orgId);
    for (const g of gateways) await g.drain.flush();
    await redis().del(idempotencyRecordKey(`${c.orgId}:${c.keyId}:old-order`));
    clock.advance(26 * 3_600_000);
    const seen = upstream.seen.length;
    const before = await lookups();
    // The other process never saw the key (no in-process memo of its replay).
    const later = await order(c, 'old-order', 1, 1);
    expect(later.status, show(later)).toBe(200);
    expect(later.body.meta).toMatchObject({ replayed: true, original_request_id: first.body.meta.request_id });
    expect(await lookups()).toBe(before + 1);
    expectFailure(await order(c, 'old-order', 2, 1), 422, 'idempotency_key_reused');
    expect(upstream.seen.length).toBe(seen);
    expect(await debits(c.orgId)).toBe(1);
  });

  it('after the fast state is lost: Postgres is asked, the rebuild restores the stamp, then Redis answers alone', async () => {
    const c = await consumer(100);
    const before = await order(c, 'before-loss', 1);
    expect(before.status, show(before)).toBe(200);
    await stamped(c.orgId);
    for (const g of gateways) await g.drain.flush();
    await loseFastState();
    const asked = await lookups();
    const fresh = await order(c, 'after-loss-1', 1, 1);
    expect(fresh.status, show(fresh)).toBe(200);
    expect(await lookups()).toBe(asked + 1); // not stamped: Postgres asked, and the rebuild started
    await stamped(c.orgId);
    const seen = upstream.seen.length;
    const quiet = await lookups();
    const answers = await withRecordsLocked(() =>
      within(Promise.all([order(c, 'after-loss-2', 1, 0), order(c, 'after-loss-3', 1, 1)]), 5_000),
    );
    for (const a of answers) expect(a.status, show(a)).toBe(200);
    expect(await lookups()).toBe(quiet);
    // A key from before the loss is in the rebuilt set: Postgres answers its replay, exactly.
    const replay = await order(c, 'before-loss', 1, 1);
    expect(replay.body.meta, show(replay)).toMatchObject({
      replayed: true,
      original_request_id: before.body.meta.request_id,
      cost_cents: 5,
    });
    expect(upstream.seen.length - seen).toBe(2);
    expect(await debits(c.orgId)).toBe(4);
  });

  it('a call booked in Postgres past an unknown settle replays on either process, charged once', async () => {
    const c = await consumer(100);
    await order(c, 'warm', 1);
    await stamped(c.orgId);
    // eslint-disable-next-line @typescript-eslint/unbound-method -- restored below; called with its own this
    const settle = RedisSpendStore.prototype.settleBatch;
    // eslint-disable-next-line @typescript-eslint/unbound-method -- restored below
    const addSeen = RedisSpendStore.prototype.addSeen;
    const seen = upstream.seen.length;
    let first;
    let tookMs;
    try {
      // The settle never runs and the seen set cannot be written either: the booking lists the key as unsynced and
      // waits out every process's fast path before answering.
      RedisSpendStore.prototype.settleBatch = () => Promise.reject(new Error('connection refused'));
      RedisSpendStore.prototype.addSeen = () => Promise.reject(new Error('connection refused'));
      const started = Date.now();
      first = await order(c, 'direct', 1, 0);
      tookMs = Date.now() - started;
      expect(first.status, show(first)).toBe(200);
      expect(tookMs).toBeGreaterThanOrEqual(UNSYNCED_WAIT_MS);
      const [row] = await sql<{ n: string }>(
        stack.db.url,
        'select count(*) as n from idempotency_unsynced where org_id = $1 and idempotency_key = $2',
        [c.orgId, 'direct'],
      );
      expect(Number(row!.n)).toBe(1);
      RedisSpendStore.prototype.settleBatch = settle;
      // Neither process may answer a first-seen key from Redis now: the retry on the other one asks Postgres.
      const retry = await order(c, 'direct', 1, 1);
      expect(retry.body.meta, show(retry)).toMatchObject({
        replayed: true,
        original_request_id: first.body.meta.request_id,
      });
    } finally {
      RedisSpendStore.prototype.settleBatch = settle;
      RedisSpendStore.prototype.addSeen = addSeen;
    }
    // Once synced (the loop of either process), the row is gone and the fast path is back; the key still replays.
    await waitFor(
      async () => {
        const rows = await sql(stack.db.url, 'select 1 from idempotency_unsynced');
        return rows.length === 0 ? true : undefined;
      },
      { timeoutMs: 10_000 },
    );
    for (const server of [0, 1]) {
      const again = await order(c, 'direct', 1, server);
      expect(again.body.meta, show(again)).toMatchObject({
        replayed: true,
        original_request_id: first.body.meta.request_id,
      });
    }
    await new Promise((r) => setTimeout(r, 1_200)); // every process has checked the table since
    const quiet = await lookups();
    const fresh = await order(c, 'after-direct', 1, 1);
    expect(fresh.status, show(fresh)).toBe(200);
    expect(await lookups()).toBe(quiet);
    expect(upstream.seen.length - seen).toBe(2);
    expect(await debits(c.orgId)).toBe(3);
  });

  it('a direct booking whose key reaches the seen set answers without waiting, and replays on both processes', async () => {
    const c = await consumer(100);
    await order(c, 'warm', 1);
    await stamped(c.orgId);
    // eslint-disable-next-line @typescript-eslint/unbound-method -- restored below
    const settle = RedisSpendStore.prototype.settleBatch;
    let first;
    try {
      RedisSpendStore.prototype.settleBatch = () => Promise.reject(new Error('connection refused'));
      first = await order(c, 'direct-synced', 1, 1);
    } finally {
      RedisSpendStore.prototype.settleBatch = settle;
    }
    expect(first.status, show(first)).toBe(200);
    for (const server of [0, 1]) {
      const again = await order(c, 'direct-synced', 1, server);
      expect(again.body.meta, show(again)).toMatchObject({
        replayed: true,
        original_request_id: first.body.meta.request_id,
      });
    }
    expect(await debits(c.orgId)).toBe(2);
  });

  it('the booking statement lists a call booked past the settle, on the one-statement and the careful path', async () => {
    const committer = createCommitter(stack.services, 20);
    const call = (c: Person, key: string): CallRecord =>
      callRecord(
        {
          usageId: newId('usage'),
          orgId: c.orgId,
          keyId: c.keyId,
          apiId: api.apiId,
          apiSlug: api.slug,
          endpointId: api.endpoints['POST /orders']!,
          providerOrgId: provider.orgId,
          method: 'POST',
          path: '/orders',
          priceCents: 5,
          idempotencyKey: key,
          requestHash: 'h'.repeat(32),
          unsynced: true,
        },
        clock.now(),
      );
    // Enough credit: one statement. 3 cents for a 5-cent call: the prepaid CHECK sends it down the careful path.
    const rich = await consumer(100);
    const poor = await consumer(3);
    expect((await committer.commit(call(rich, 'booked-direct'))).duplicate).toBe(false);
    expect((await committer.commit(call(poor, 'booked-careful'))).billableCents).toBe(2);
    await committer.flush();
    // Nothing but the unsynced rows tells Redis of these keys: the processes' loops put them in the seen sets.
    for (const [c, key] of [
      [rich, 'booked-direct'],
      [poor, 'booked-careful'],
    ] as const) {
      await waitFor(
        async () => ((await redis().sismember(seenKey(c.orgId), seenKeyHash(c.keyId, key))) ? true : undefined),
        {
          timeoutMs: 10_000,
        },
      );
    }
    await waitFor(
      async () => ((await sql(stack.db.url, 'select 1 from idempotency_unsynced')).length === 0 ? true : undefined),
      {
        timeoutMs: 10_000,
      },
    );
  });
});
