// The gateway on a real three-master Redis Cluster (started on loopback by the harness, no mocks): paid calls under
// concurrency spend exactly the credit, the books match, a change announced on pub/sub reaches the gateway, and the
// sweeper finds and voids a reservation nobody settled, whatever node its org's slot is on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisCounterStore } from '../../../core/counters/index.js';
import type { Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http } from '../../helpers/http.js';
import { waitFor } from '../../helpers/ports.js';
import { useGatewayStack } from '../../helpers/gateway-stack.js';
import { startRedisCluster, type RedisClusterHarness } from '../../helpers/redis-cluster.js';

describe('gateway on a Redis Cluster', () => {
  let cluster: RedisClusterHarness;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 90_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  const g = useGatewayStack(
    () => ({
      env: { REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.env, GATEWAY_RATE_LIMIT_PER_MIN: '100000' },
      endpoints: [{ method: 'GET', path: '/items/{id}', priceCents: 1 }],
    }),
    async (services) => {
      const report = await services.reconciliation.run();
      expect(report.ok, JSON.stringify(report)).toBe(true);
      expect(await services.ledger.findDrift()).toEqual([]);
    },
  );

  const consumer = (credit: number): Promise<Person> => g.consumer(credit);
  const call = (p: Person, id: number) =>
    http(g.server.url, 'GET', `/v1/proxy/${g.api.slug}/items/${id}`, { token: p.apiKey });
  // The calls answered so far are in Postgres first (the usage drain: docs/durability.md).
  const balance = (orgId: string) => g.balance(orgId);

  it('runs on a cluster client', () => {
    expect(g.stack.config.counters.kind).toBe('redis-cluster');
    expect((g.stack.services.counters as RedisCounterStore).client.isCluster).toBe(true);
  });

  it('100 cents buy exactly 100 of 150 concurrent 1-cent calls, and the books match', async () => {
    const c = await consumer(100);
    const results = await Promise.all(Array.from({ length: 150 }, (_, i) => call(c, i)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    for (const r of results.filter((x) => x.status !== 200)) expectFailure(r, 402, 'payment_required');
    expect(await balance(c.orgId)).toBe(0);
    const [usage] = await sql<{ n: number; cost: number }>(
      g.stack.db.url,
      `select count(*)::int as n, coalesce(sum(cost_cents), 0)::int as cost
         from usage_events where org_id = $1 and outcome = 'success'`,
      [c.orgId],
    );
    expect(usage).toEqual({ n: 100, cost: 100 });
  });

  it('several orgs at once (their slots on different nodes) each spend exactly their own credit', async () => {
    const orgs = await Promise.all(Array.from({ length: 6 }, () => consumer(10)));
    const results = await Promise.all(orgs.flatMap((c) => Array.from({ length: 15 }, (_, i) => call(c, i))));
    expect(results.filter((r) => r.status === 200)).toHaveLength(60);
    for (const c of orgs) expect(await balance(c.orgId)).toBe(0);
  });

  it('a change announced on pub/sub reaches the gateway (a suspension applies at once)', async () => {
    const c = await consumer(50);
    expect((await call(c, 1)).status).toBe(200);
    await sql(g.stack.db.url, `update orgs set suspended = true, suspended_reason = 'test' where id = $1`, [c.orgId]);
    await g.stack.services.gatewayEvents.orgChanged(c.orgId);
    // Without the message the fresh fast state would keep admitting for 5 s.
    await waitFor(async () => (await call(c, 2)).status === 402, { timeoutMs: 2_000, what: 'the suspension' });
  });

  it('the sweeper voids a reservation nobody settled', async () => {
    const c = await consumer(10);
    expect((await call(c, 1)).status).toBe(200); // hydrates the org and key
    const now = Date.now();
    const day = new Date(now).toISOString().slice(0, 10);
    const reservationId = `use_cluster_sweep_${now}`;
    const admitted = await g.stack.services.spend.admit({
      orgId: c.orgId,
      keyId: c.keyId,
      rateKey: `sweep_${now}`,
      ratePerMin: 100,
      day,
      priceCents: 9,
      perCallMaxCents: null,
      budgetCents: null,
      dailyCapCents: null,
      ancestors: [],
      idempotencyKey: null,
      requestHash: '',
      reservationId,
      nowMs: now - 60_000,
      reservationTtlMs: 1,
      staleAfterMs: 3_600_000,
    });
    expect(admitted.outcome).toBe('admitted');
    // The 9 cents are held: a 1-cent call no longer fits the 9 cents left.
    expectFailure(await call(c, 2), 402, 'payment_required');
    const swept = await g.gateway.sweeper.sweepOnce();
    expect(swept.voided).toBeGreaterThanOrEqual(1);
    expect((await g.stack.services.spend.expired(Date.now(), 10_000)).map((r) => r.reservationId)).not.toContain(
      reservationId,
    );
    expect((await call(c, 3)).status).toBe(200);
  });
});
