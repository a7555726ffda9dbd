// Idempotency survives Redis (issue 10): with the fast state flushed or a settle's record lost, Postgres answers
// replays, the upstream sees one call and the org one debit; the commit itself refuses a second booking under one key.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import type { RedisCounterStore } from '../../../core/counters/index.js';
import { newId } from '../../../core/ids.js';
import { idempotencyRecordKey } from '../../../core/spend/redis-spend-store.js';
import type { CallRecord } from '../../../core/spend/usage-committer.js';
import { expectReconciled } from '../../helpers/books.js';
import { callRecord, createCommitter } from '../../helpers/call-records.js';
import { ORDERS_API, useGatewayStack } from '../../helpers/gateway-stack.js';
import { describe as show, expectFailure, http } from '../../helpers/http.js';

describe('idempotency survives Redis', () => {
  const clock = new ManualClock(new Date('2026-11-23T12:00:00Z'));
  const g = useGatewayStack({ ...ORDERS_API, clock }, expectReconciled);

  const redisKeys = async () => {
    const redis = (g.stack.services.counters as RedisCounterStore).client;
    const prefix = g.stack.config.counters.keyPrefix;
    return { redis, prefix, keys: (await redis.keys(`${prefix}sp:*`)).map((k) => k.slice(prefix.length)) };
  };

  it('after the fast state is flushed: the same key replays from Postgres, one upstream call, one debit', async () => {
    const c = await g.consumer(100);
    const seenBefore = g.upstream.seen.length;
    const first = await http(g.server.url, 'POST', `/v1/proxy/${g.api.slug}/orders`, {
      token: c.apiKey,
      body: { n: 1 },
      headers: { 'idempotency-key': 'order-1' },
    });
    expect(first.status, show(first)).toBe(200);
    await new Promise((r) => setTimeout(r, 50)); // let the settle land, then lose it all
    const { redis, keys } = await redisKeys();
    await redis.del(...keys);

    const again = await http(g.server.url, 'POST', `/v1/proxy/${g.api.slug}/orders`, {
      token: c.apiKey,
      body: { n: 1 },
      headers: { 'idempotency-key': 'order-1' },
    });
    expect(again.status, show(again)).toBe(200);
    expect(again.body.data).toBeNull();
    expect(again.body.meta).toMatchObject({
      replayed: true,
      original_request_id: first.body.meta.request_id,
      cost_cents: 5,
      credit_applied_cents: 5,
      billable_cents: 0,
    });
    // Another request under the same key is still refused.
    const other = await http(g.server.url, 'POST', `/v1/proxy/${g.api.slug}/orders`, {
      token: c.apiKey,
      body: { n: 2 },
      headers: { 'idempotency-key': 'order-1' },
    });
    expectFailure(other, 422, 'idempotency_key_reused');
    expect(g.upstream.seen.length - seenBefore).toBe(1);
    expect(await g.debits(c.orgId)).toBe(1);
    expect(await g.balance(c.orgId)).toBe(95);
  });

  it('after a lost settle (the record never written) and 24 h later: still one upstream call, one debit', async () => {
    const c = await g.consumer(100);
    const seenBefore = g.upstream.seen.length;
    const send = () =>
      http(g.server.url, 'POST', `/v1/proxy/${g.api.slug}/orders`, {
        token: c.apiKey,
        body: { n: 3 },
        headers: { 'idempotency-key': 'order-lost-settle' },
      });
    const first = await send();
    expect(first.status, show(first)).toBe(200);
    await new Promise((r) => setTimeout(r, 50));
    // The settle's record is gone (as if the settle never ran and the claim expired).
    const { redis } = await redisKeys();
    await redis.del(idempotencyRecordKey(`${c.orgId}:${c.keyId}:order-lost-settle`));
    const second = await send();
    expect(second.body.meta, show(second)).toMatchObject({ replayed: true });

    clock.advance(24 * 3_600_000 + 60_000);
    const { keys } = await redisKeys();
    await redis.del(...keys);
    const later = await send();
    expect(later.status, show(later)).toBe(200);
    expect(later.body.meta).toMatchObject({ replayed: true, original_request_id: first.body.meta.request_id });
    expect(g.upstream.seen.length - seenBefore).toBe(1);
    expect(await g.debits(c.orgId)).toBe(1);
    expect(await g.balance(c.orgId)).toBe(95);
  });

  it('the commit itself refuses a second booking under one key (the unique backstop)', async () => {
    const c = await g.consumer(100);
    const committer = createCommitter(g.stack.services, 20);
    const call = (usageId: string): CallRecord =>
      callRecord(
        {
          usageId,
          orgId: c.orgId,
          keyId: c.keyId,
          apiId: g.api.apiId,
          apiSlug: g.api.slug,
          endpointId: g.api.endpoints['POST /orders']!,
          providerOrgId: g.provider.orgId,
          method: 'POST',
          path: '/orders',
          priceCents: 5,
          idempotencyKey: 'dup-key',
          requestHash: 'h'.repeat(32),
          day: '2026-11-23',
        },
        clock.now(),
      );
    // Two in one batch, then a third in a later batch.
    const [a, b] = await Promise.all([committer.commit(call(newId('usage'))), committer.commit(call(newId('usage')))]);
    expect([a.duplicate, b.duplicate].sort()).toEqual([false, true]);
    expect((await committer.commit(call(newId('usage')))).duplicate).toBe(true);
    expect(await g.debits(c.orgId)).toBe(1);
    expect(await g.balance(c.orgId)).toBe(95);
    await committer.flush();
  });
});
