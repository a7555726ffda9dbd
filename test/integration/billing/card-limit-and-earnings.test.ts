// Card billing through the gateway (issue 10): a card-billed org is bounded by its credit limit, and a paid call's
// booking never waits for the provider's org row (earnings are queued, then folded).
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { expectReconciled } from '../../helpers/books.js';
import { sql } from '../../helpers/db.js';
import { ORDERS_API, useGatewayStack } from '../../helpers/gateway-stack.js';
import { describe as show, expectFailure, http } from '../../helpers/http.js';

describe('card-billed orgs and earnings at the gateway', () => {
  const g = useGatewayStack(ORDERS_API, expectReconciled);

  it('a card-billed org is refused past its credit limit (402 payment_required), per org or by default', async () => {
    const c = await g.consumer(0);
    await sql(g.stack.db.url, "update orgs set billing_mode = 'card' where id = $1", [c.orgId]);
    await g.stack.services.spend.forgetOrg(c.orgId);
    const order = () => http(g.server.url, 'POST', `/v1/proxy/${g.api.slug}/orders`, { token: c.apiKey, body: {} });
    expect((await order()).status).toBe(200);
    expect((await order()).status).toBe(200);
    const refused = await order(); // 10 owed; 15 would pass CARD_CREDIT_LIMIT_CENTS=12
    expectFailure(refused, 402, 'payment_required');
    expect(refused.body.error.details).toMatchObject({ reason: 'credit_limit_reached' });
    expect(await g.balance(c.orgId)).toBe(-10);
    // An operator's per-org limit replaces the default.
    await sql(g.stack.db.url, 'update orgs set credit_limit_cents = 1000 where id = $1', [c.orgId]);
    await g.stack.services.spend.forgetOrg(c.orgId);
    expect((await order()).status).toBe(200);
    expect(await g.balance(c.orgId)).toBe(-15);
  });

  it("a paid call never waits for the provider's org row: earnings are queued, then folded off the hot path", async () => {
    const c = await g.consumer(10);
    // Another transaction holds the provider's org row (a payout, an operator) for the whole call and its booking.
    const holder = new pg.Client({ connectionString: g.stack.db.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select id from orgs where id = $1 for update', [g.provider.orgId]);
      const res = await http(g.server.url, 'POST', `/v1/proxy/${g.api.slug}/orders`, { token: c.apiKey, body: {} });
      expect(res.status, show(res)).toBe(200);
      let timer: NodeJS.Timeout | undefined;
      const booked = await Promise.race([
        g.gateway.drain.flush().then(() => true),
        new Promise<false>((r) => (timer = setTimeout(() => r(false), 5_000))),
      ]);
      clearTimeout(timer);
      expect(booked, 'the booking waited for the lock on the provider').toBe(true);
      const [queued] = await sql<{ gross_cents: string }>(
        g.stack.db.url,
        'select gross_cents from earning_accruals where consumer_org_id = $1',
        [c.orgId],
      );
      expect(queued).toEqual({ gross_cents: '5' });
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    expect(await g.debits(c.orgId)).toBe(1);
  });
});
