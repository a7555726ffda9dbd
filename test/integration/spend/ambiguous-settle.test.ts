// An ambiguous settle outcome is fenced (issue 10): never a 503 for a charged call, never a void of spent money; a
// call Postgres also refused is answered 503, held, then voided by the sweeper.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { RedisSpendStore } from '../../../core/spend/redis-spend-store.js';
import { UsageCommitter } from '../../../core/spend/usage-committer.js';
import { expectReconciled } from '../../helpers/books.js';
import { sql } from '../../helpers/db.js';
import { ORDERS_API, useGatewayStack } from '../../helpers/gateway-stack.js';
import { describe as show, expectFailure, http } from '../../helpers/http.js';
import { waitFor } from '../../helpers/ports.js';

describe('ambiguous settle outcome', () => {
  const clock = new ManualClock(new Date('2026-11-23T12:00:00Z'));
  const g = useGatewayStack({ ...ORDERS_API, clock }, expectReconciled);

  it('a settle whose answer is lost: the call is booked in Postgres and answered 200, charged once', async () => {
    const c = await g.consumer(20);
    // eslint-disable-next-line @typescript-eslint/unbound-method -- restored below; called with its own this
    const original = RedisSpendStore.prototype.settleBatch;
    RedisSpendStore.prototype.settleBatch = async function (this: RedisSpendStore, input) {
      await original.call(this, input);
      throw new Error('connection lost after the script ran');
    };
    const headers = { 'Idempotency-Key': 'lost-answer' };
    let res;
    try {
      res = await http(g.server.url, 'POST', `/v1/proxy/${g.api.slug}/orders`, { token: c.apiKey, body: {}, headers });
    } finally {
      RedisSpendStore.prototype.settleBatch = original;
    }
    expect(res.status, show(res)).toBe(200);
    expect(res.body.meta).toMatchObject({ cost_cents: 5, credit_applied_cents: 5, billable_cents: 0 });
    // Booked before the answer: the debit is in Postgres already.
    const [row] = await sql<{ n: string }>(
      g.stack.db.url,
      "select count(*) as n from ledger_entries where org_id = $1 and kind = 'usage'",
      [c.orgId],
    );
    expect(Number(row!.n)).toBe(1);
    const again = await http(g.server.url, 'POST', `/v1/proxy/${g.api.slug}/orders`, {
      token: c.apiKey,
      body: {},
      headers,
    });
    expect(again.status, show(again)).toBe(200);
    expect(again.body.meta).toMatchObject({ replayed: true, cost_cents: 5 });
    // The settle's stream entry was delivered to this process but never handed to its drain: a claim books it,
    // as a duplicate of the call already in Postgres.
    await waitFor(
      async () => {
        await g.gateway.drain.claimOnce();
        return (await g.stack.services.spend.pendingUsage(c.orgId)) === 0 ? true : undefined;
      },
      { timeoutMs: 15_000 },
    );
    expect(await g.debits(c.orgId)).toBe(1);
    expect(await g.balance(c.orgId)).toBe(15);
  });

  it('a settle that never ran (the fast state failed first): booked in Postgres, answered 200, the hold released', async () => {
    const c = await g.consumer(5);
    // eslint-disable-next-line @typescript-eslint/unbound-method -- restored below
    const original = RedisSpendStore.prototype.settleBatch;
    RedisSpendStore.prototype.settleBatch = function () {
      return Promise.reject(new Error('connection refused'));
    };
    let res;
    try {
      res = await http(g.server.url, 'POST', `/v1/proxy/${g.api.slug}/orders`, { token: c.apiKey, body: {} });
    } finally {
      RedisSpendStore.prototype.settleBatch = original;
    }
    expect(res.status, show(res)).toBe(200);
    expect(await g.balance(c.orgId)).toBe(0);
    // The hold is gone and the org is re-read from Postgres: nothing left to spend, and nothing for the sweeper.
    const next = await http(g.server.url, 'POST', `/v1/proxy/${g.api.slug}/orders`, { token: c.apiKey, body: {} });
    expectFailure(next, 402, 'payment_required');
    clock.advance(60_000);
    expect(await g.gateway.sweeper.sweepOnce()).toEqual({ voided: 0 });
    expect(await g.debits(c.orgId)).toBe(1);
  });

  it('a settle whose outcome is unknown while Postgres also refuses the booking: 503, not charged', async () => {
    const c = await g.consumer(5);
    // eslint-disable-next-line @typescript-eslint/unbound-method -- restored below
    const original = RedisSpendStore.prototype.settleBatch;
    // eslint-disable-next-line @typescript-eslint/unbound-method -- restored below
    const commit = UsageCommitter.prototype.commit;
    RedisSpendStore.prototype.settleBatch = () => Promise.reject(new Error('connection refused'));
    UsageCommitter.prototype.commit = () => Promise.reject(new Error('database down'));
    let res;
    try {
      res = await http(g.server.url, 'POST', `/v1/proxy/${g.api.slug}/orders`, { token: c.apiKey, body: {} });
    } finally {
      RedisSpendStore.prototype.settleBatch = original;
      UsageCommitter.prototype.commit = commit;
    }
    expectFailure(res, 503, 'internal_error');
    expect(await g.balance(c.orgId)).toBe(5);
    // Held until the reservation expires, then voided: the 5 cents can be spent again.
    clock.advance(60_000);
    expect(await g.gateway.sweeper.sweepOnce()).toEqual({ voided: 1 });
    const next = await http(g.server.url, 'POST', `/v1/proxy/${g.api.slug}/orders`, { token: c.apiKey, body: {} });
    expect(next.status, show(next)).toBe(200);
    expect(await g.balance(c.orgId)).toBe(0);
  });
});
