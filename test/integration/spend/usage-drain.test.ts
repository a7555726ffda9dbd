// The durability contract's steady state (docs/durability.md): a paid call's answer is sent once its usage is in the
// fast state's usage stream, and the call's usage row and ledger debit reach Postgres within 1 s. Calls at a steady
// rate through the real gateway on real Redis and Postgres; each answer's row is looked for in Postgres from the moment
// the answer arrives (never through the drain's own flush). Also: a read right after a call sees it (the control
// plane's read barrier), and the pending spend the fast state holds is released once Postgres has the call.
import pg from 'pg';
import { newId } from '../../../core/ids.js';
import type { CallRecord } from '../../../core/spend/usage-committer.js';
import { UsageDrain } from '../../../core/spend/usage-drain.js';
import { waitFor } from '../../helpers/ports.js';
import { sql } from '../../helpers/db.js';
import { callRecord, createCommitter } from '../../helpers/call-records.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import type { Person } from '../../helpers/accounts.js';
import { describe as show, http, serve } from '../../helpers/http.js';
import { useGatewayStack } from '../../helpers/gateway-stack.js';

const RATE_PER_S = 40;
const SECONDS = 3;

describe('usage drain', () => {
  const g = useGatewayStack(
    {
      env: { GATEWAY_RATE_LIMIT_PER_MIN: '100000' },
      basePath: '/base',
      endpoints: [{ method: 'GET', path: '/items/{id}', priceCents: 2 }],
    },
    async (services) => {
      const report = await services.reconciliation.run();
      expect(report.ok, JSON.stringify(report)).toBe(true);
    },
  );
  let apiApp: RunningHttpServer;
  beforeAll(async () => {
    apiApp = await serve(createApiApp(g.stack.services).callback());
  });
  afterAll(async () => {
    await apiApp?.close();
  });

  const consumer = (credit: number): Promise<Person> => g.consumer(credit);
  const call = (p: Person, i: number) =>
    http(g.server.url, 'GET', `/v1/proxy/${g.api.slug}/items/${i}`, { token: p.apiKey });

  /** The usage committer a drain uses, on the test stack. */
  const newCommitter = () => createCommitter(g.stack.services, g.stack.config.billing.platformFeePercent);
  /** A 2-cent call of `c` to GET /items/1 answered 200 `at`, its split decided (all from credit). */
  const callOf = (c: Person, at: Date, fields: Partial<CallRecord>): CallRecord =>
    callRecord(
      {
        orgId: c.orgId,
        keyId: c.keyId,
        apiId: g.api.apiId,
        apiSlug: g.api.slug,
        endpointId: g.api.endpoints['GET /items/{id}']!,
        providerOrgId: g.provider.orgId,
        path: '/items/1',
        priceCents: 2,
        creditAppliedCents: 2,
        billableCents: 0,
        ...fields,
      },
      at,
    );

  /**
   * Watches Postgres for answered calls: one connection, one query every 5 ms for every call still missing; a call's
   * lag is the time from its answer to the first poll that sees both its usage row and its ledger debit.
   */
  function watchPostgres() {
    const client = new pg.Client({ connectionString: g.stack.db.url });
    const waiting = new Map<string, number>();
    const lags: number[] = [];
    let stopped = false;
    const loop = (async () => {
      await client.connect();
      while (!stopped || waiting.size > 0) {
        if (waiting.size > 0) {
          const { rows } = await client.query<{ request_id: string }>(
            `select u.request_id from usage_events u
               join ledger_entries l on l.org_id = u.org_id and l.idempotency_key = 'usage_batch:' || u.batch_id
              where u.request_id = any($1) and u.outcome = 'success'`,
            [[...waiting.keys()]],
          );
          const now = performance.now();
          for (const r of rows) {
            lags.push(now - waiting.get(r.request_id)!);
            waiting.delete(r.request_id);
          }
          for (const [id, at] of waiting) {
            if (now - at <= 5_000) continue;
            lags.push(Infinity);
            waiting.delete(id);
          }
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      await client.end();
    })();
    return {
      answered: (requestId: string, at: number) => waiting.set(requestId, at),
      async done(): Promise<number[]> {
        stopped = true;
        await loop;
        return lags.sort((a, b) => a - b);
      },
    };
  }

  it(`at a steady ${RATE_PER_S} calls/s, every answered call is in Postgres (usage row and debit) within 1 s`, async () => {
    const c = await consumer(100_000);
    const watch = watchPostgres();
    const started = performance.now();
    const total = RATE_PER_S * SECONDS;
    const sent: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / RATE_PER_S;
      await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
      sent.push(
        call(c, i).then((res) => {
          watch.answered(res.body.meta.request_id as string, performance.now());
          expect(res.status, show(res)).toBe(200);
        }),
      );
    }
    await Promise.all(sent);
    const all = await watch.done();
    const p50 = all[Math.floor(all.length / 2)]!;
    const max = all[all.length - 1]!;
    console.log(`usage drain lag over ${all.length} calls: p50 ${p50.toFixed(1)} ms, max ${max.toFixed(1)} ms`);
    expect(all).toHaveLength(total);
    expect(max).toBeLessThan(1_000);
  });

  it('a read right after a call sees it: balance, usage and key spend (the read barrier)', async () => {
    const c = await consumer(100);
    for (let i = 0; i < 5; i++) {
      const res = await call(c, i);
      expect(res.status, show(res)).toBe(200);
      const balance = await http(apiApp.url, 'GET', '/v1/billing/balance', { token: c.apiKey });
      expect(balance.status, show(balance)).toBe(200);
      expect(balance.body.data).toMatchObject({ credit_cents: 100 - 2 * (i + 1) });
    }
    const keys = await http(apiApp.url, 'GET', '/v1/keys', { token: c.session });
    expect(keys.body.data.find((k: { id: string }) => k.id === c.keyId)).toMatchObject({ spent_cents: 10 });
  });

  it('the fast state holds settled spend as pending until Postgres has it, then releases it exactly', async () => {
    const c = await consumer(10);
    for (let i = 0; i < 5; i++) expect((await call(c, i)).status).toBe(200);
    await g.gateway.drain.flush();
    expect(await g.stack.services.spend.pendingUsage(c.orgId)).toBe(0);
    // 10 cents bought exactly five 2-cent calls; the sixth is refused whether or not Postgres had caught up.
    expect((await call(c, 6)).status).toBe(402);
  });

  it('a call drained twice (its drainer died between commit and ack) is booked once, alone or in a batch', async () => {
    const c = await consumer(100);
    const committer = newCommitter();
    const at = new Date();
    const record = (usageId: string) => callOf(c, at, { usageId });
    const first = record(newId('usage'));
    await committer.commit(first);
    // Again alone, then again beside a new call in one batch: only the new call is booked.
    await committer.commit(first);
    const second = record(newId('usage'));
    await Promise.all([committer.commit(first), committer.commit(second)]);
    await committer.flush();
    const rows = await sql<{ n: number; cents: number }>(
      g.stack.db.url,
      `select count(*)::int as n, coalesce(-sum(amount_cents), 0)::int as cents from ledger_entries
        where org_id = $1 and kind = 'usage'`,
      [c.orgId],
    );
    expect(rows[0]).toEqual({ n: 2, cents: 4 });
    const usage = await sql<{ n: number }>(
      g.stack.db.url,
      'select count(*)::int as n from usage_events where org_id = $1',
      [c.orgId],
    );
    expect(usage[0]!.n).toBe(2);
  });

  it('a call Postgres refuses for good does not hold back the calls that shared its batch', async () => {
    const c = await consumer(100);
    const committer = newCommitter();
    const drain = new UsageDrain(g.stack.services.spend, committer, g.stack.services.logger, { claimIntervalMs: 0 });
    const at = new Date();
    const record = (path: string) => callOf(c, at, { usageId: newId('usage'), path });
    // Postgres refuses a NUL in text: this call fails every batch it is in.
    const poison = record('/items/a\u0000b');
    const good = record('/items/1');
    drain.add({ stream: '0', id: '0-1' }, poison);
    drain.add({ stream: '0', id: '0-2' }, good);
    const booked = async () =>
      (
        await sql<{ n: number }>(g.stack.db.url, 'select count(*)::int as n from usage_events where request_id = $1', [
          good.requestId,
        ])
      )[0]!.n;
    await waitFor(async () => (await booked()) === 1, { timeoutMs: 5_000, what: 'the good call booked alone' });
    await drain.stop();
    const [ledger] = await sql<{ n: number }>(
      g.stack.db.url,
      "select count(*)::int as n from ledger_entries where org_id = $1 and kind = 'usage'",
      [c.orgId],
    );
    expect(ledger!.n).toBe(1);
  });
});
