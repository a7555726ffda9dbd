// Books per batch (docs/decisions.md, Books per batch): the gateway's group commit books one consumer ledger row per
// (org, usage batch), one usage_batches row, one earning accrual per (provider, batch) whose fee is the sum of each
// call's fee, and points every call's usage row at its batch; a drain retried after a crash between commit and
// acknowledgement books nothing twice; a prepaid org short of credit inside a batch is charged what is left. Real
// Postgres, both of the committer's paths (the one-statement commit and the careful path).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitPrice } from '../../../core/money/split.js';
import { newId } from '../../../core/ids.js';
import { UsageCommitter, type CallRecord } from '../../../core/spend/usage-committer.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { checkBooks } from '../../helpers/books.js';
import { callRecord, createCommitter } from '../../helpers/call-records.js';
import { sql } from '../../helpers/db.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

const FEE = 20;

describe('books per batch', () => {
  let stack: TestStack;
  let providerA: Person;
  let providerB: Person;

  beforeAll(async () => {
    stack = await createTestStack();
    providerA = await createPerson(stack.services);
    providerB = await createPerson(stack.services);
  });
  afterAll(async () => {
    await stack?.services.earnings.foldAll();
    const report = await stack?.services.reconciliation.run();
    expect(report?.ok, JSON.stringify(report)).toBe(true);
    await stack?.close();
  });

  const committer = () => createCommitter(stack.services, FEE);

  async function consumer(credit: number, mode: 'prepaid' | 'card' = 'prepaid'): Promise<Person> {
    const p = await createPerson(stack.services);
    if (credit > 0) await stack.services.ledger.post({ orgId: p.orgId, kind: 'grant', amountCents: credit });
    if (mode === 'card') await sql(stack.db.url, "update orgs set billing_mode = 'card' where id = $1", [p.orgId]);
    return p;
  }

  let tick = 0;
  const record = (c: Person, provider: Person, priceCents: number): CallRecord =>
    callRecord(
      {
        orgId: c.orgId,
        keyId: c.keyId,
        apiId: 'api_batches',
        apiSlug: 'batches',
        endpointId: 'ep_batches',
        providerOrgId: provider.orgId,
        path: '/x',
        priceCents,
      },
      new Date(Date.now() + tick++),
    );

  /**
   * Four 2-cent calls of `c` (5 cents of credit) committed together: 2 and 2 from credit, then 1 + 1, then 0 + 2.
   * Returns the org's batches.
   */
  async function commitFourCalls(c: Person, provider: Person) {
    const calls = Array.from({ length: 4 }, () => record(c, provider, 2));
    const w = committer();
    const results = await Promise.all(calls.map((call) => w.commit(call)));
    expect(results.map((r) => [r.creditAppliedCents, r.billableCents])).toEqual([
      [2, 0],
      [2, 0],
      [1, 1],
      [0, 2],
    ]);
    return batchesOf(c.orgId);
  }
  const shapeOf = (batches: { calls: number; charged: number; credit: number; billable: number }[]) =>
    batches.map(({ calls: n, charged, credit, billable }) => ({ n, charged, credit, billable }));

  const ledgerOf = (orgId: string) =>
    sql<{ amount: number; after: number; key: string; memo: string }>(
      stack.db.url,
      `select amount_cents::int as amount, balance_after_cents::int as after, idempotency_key as key, memo
         from ledger_entries where org_id = $1 and kind = 'usage' order by balance_after_cents desc`,
      [orgId],
    );
  const batchesOf = (orgId: string) =>
    sql<{
      id: string;
      calls: number;
      charged: number;
      credit: number;
      billable: number;
      first_usage_id: string;
      last_usage_id: string;
    }>(
      stack.db.url,
      `select id, calls, charged_cents::int as charged, credit_applied_cents::int as credit,
              billable_cents::int as billable, first_usage_id, last_usage_id
         from usage_batches where org_id = $1 order by first_at, id`,
      [orgId],
    );
  const usageOf = (orgId: string) =>
    sql<{ id: string; batch_id: string | null; credit: number; billable: number }>(
      stack.db.url,
      `select id, batch_id, credit_applied_cents::int as credit, billable_cents::int as billable
         from usage_events where org_id = $1 order by created_at, id`,
      [orgId],
    );

  it('N paid calls committed together: one ledger row, one batch, one accrual per provider, each row in the batch', async () => {
    const c = await consumer(10_000);
    // Prices whose fees round differently one by one than summed: 3 → 1, 7 → 1 (20%), 1 → 0.
    const prices = Array.from({ length: 30 }, (_, i) => [3, 7, 1][i % 3]!);
    const calls = prices.map((p, i) => record(c, i % 2 === 0 ? providerA : providerB, p));
    const w = committer();
    const results = await Promise.all(calls.map((call) => w.commit(call)));
    const sum = prices.reduce((a, b) => a + b, 0);
    expect(results.every((r) => !r.duplicate && r.billableCents === 0)).toBe(true);
    expect(results.at(-1)!.org?.creditCents).toBe(10_000 - sum);

    const [batch, ...moreBatches] = await batchesOf(c.orgId);
    expect(moreBatches).toEqual([]);
    expect(batch).toMatchObject({
      calls: 30,
      charged: sum,
      credit: sum,
      billable: 0,
      first_usage_id: calls[0]!.usageId,
      last_usage_id: calls[29]!.usageId,
    });
    expect(await ledgerOf(c.orgId)).toEqual([
      { amount: -sum, after: 10_000 - sum, key: `usage_batch:${batch!.id}`, memo: '30 paid calls' },
    ]);
    const usage = await usageOf(c.orgId);
    expect(usage).toHaveLength(30);
    expect(usage.every((u) => u.batch_id === batch!.id)).toBe(true);

    const accruals = await sql<{ provider_org_id: string; gross: number; fee: number }>(
      stack.db.url,
      `select provider_org_id, gross_cents::int as gross, fee_cents::int as fee from earning_accruals
        where batch_id = $1 order by provider_org_id`,
      [batch!.id],
    );
    const expected = [providerA, providerB]
      .map((p, n) => {
        const mine = prices.filter((_, i) => i % 2 === n);
        return {
          provider_org_id: p.orgId,
          gross: mine.reduce((a, b) => a + b, 0),
          fee: mine.reduce((a, b) => a + splitPrice(b, FEE).platformFeeCents, 0),
        };
      })
      .sort((a, b) => a.provider_org_id.localeCompare(b.provider_org_id));
    expect(accruals).toEqual(expected);
    // Summing the fees call by call is not the fee of the sum (the rounding drift batches must not have).
    expect(expected[0]!.fee).not.toBe(splitPrice(expected[0]!.gross, FEE).platformFeeCents);

    // 30 usage rows + 1 batch + 1 ledger row + 2 accruals.
    const [written] = await sql<{ n: number }>(
      stack.db.url,
      `select ((select count(*) from usage_events where org_id = $1) + (select count(*) from usage_batches where org_id = $1)
             + (select count(*) from ledger_entries where org_id = $1 and kind = 'usage')
             + (select count(*) from earning_accruals where consumer_org_id = $1))::int as n`,
      [c.orgId],
    );
    expect(written!.n).toBe(34);

    // Folded into the providers' ledgers per (provider, batch), referenced by the batch; the books balance.
    await stack.services.earnings.foldAll();
    const earned = await sql<{ org_id: string; kind: string; amount: number; reference: string }>(
      stack.db.url,
      `select org_id, kind, amount_cents::int as amount, reference from ledger_entries
        where reference = $1 and kind <> 'usage' order by org_id, kind`,
      [`usage_batch:${batch!.id}`],
    );
    expect(earned).toHaveLength(4);
    for (const e of expected) {
      expect(earned.filter((r) => r.org_id === e.provider_org_id)).toEqual([
        { org_id: e.provider_org_id, kind: 'platform_fee', amount: -e.fee, reference: `usage_batch:${batch!.id}` },
        { org_id: e.provider_org_id, kind: 'provider_earning', amount: e.gross, reference: `usage_batch:${batch!.id}` },
      ]);
    }
    const report = await stack.services.reconciliation.run();
    expect(report, JSON.stringify(report)).toMatchObject({ ok: true, unmatched_batches: [], unbatched_calls: [] });
    const answers = calls.map((call) => ({ status: 200, requestId: call.requestId, costCents: call.priceCents }));
    const books = await checkBooks(stack.db.url, answers, { settleTimeoutMs: 3_000, throwOnFailure: false });
    // Only this test's calls were answered here: the other tests' calls count as unannounced, nothing else is wrong.
    expect(books.problems.filter((p) => !p.includes('were never answered'))).toEqual([]);
  });

  it('with a minimum interval (the embedded database), calls arriving apart share one transaction; flush waits for it', async () => {
    const c = await consumer(1_000);
    const w = new UsageCommitter(
      { orm: stack.services.orm, logger: stack.services.logger, feePercent: FEE, prepared: true },
      { minIntervalMs: 200 },
    );
    // The first call starts a batch at once; the next three, 10 ms apart, wait for the interval and go together.
    const first = w.commit(record(c, providerA, 2));
    await first;
    const started = performance.now();
    const later: Promise<unknown>[] = [];
    for (let i = 0; i < 3; i++) {
      later.push(w.commit(record(c, providerA, 2)));
      await new Promise((r) => setTimeout(r, 10));
    }
    await Promise.all(later);
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
    expect((await batchesOf(c.orgId)).map((b) => b.calls)).toEqual([1, 3]);
    // flush does not wait out the interval (the next batch may start only 200 ms after the last one started).
    const t = performance.now();
    void w.commit(record(c, providerA, 2));
    await w.flush();
    expect(performance.now() - t).toBeLessThan(120);
    expect((await batchesOf(c.orgId)).map((b) => b.calls)).toEqual([1, 3, 1]);
  });

  it('a drain retried after a crash between commit and ack books nothing twice (alone, batched, concurrently)', async () => {
    const c = await consumer(1_000);
    const calls = Array.from({ length: 20 }, () => record(c, providerA, 2));
    const first = committer();
    await Promise.all(calls.map((call) => first.commit(call)));
    // The same entries drained again by a fresh drainer, with one new call beside them: only the new one is booked.
    const fresh = record(c, providerA, 2);
    const retry = committer();
    const again = await Promise.all([...calls, fresh].map((call) => retry.commit(call)));
    expect(again.map((r) => r.duplicate)).toEqual([...calls.map(() => true), false]);
    // Two drainers racing on the same entries (a claim while the first is still committing).
    const raced = Array.from({ length: 10 }, () => record(c, providerB, 3));
    const [one, two] = [committer(), committer()];
    await Promise.all(raced.flatMap((call) => [one.commit(call), two.commit(call)]));
    // Each call of the careful path once more.
    for (const call of calls.slice(0, 3)) expect((await committer().commitAlone(call)).duplicate).toBe(true);

    const batches = await batchesOf(c.orgId);
    expect(batches.reduce((a, b) => a + b.calls, 0)).toBe(31);
    expect(batches.reduce((a, b) => a + b.charged, 0)).toBe(20 * 2 + 2 + 10 * 3);
    const ledger = await ledgerOf(c.orgId);
    expect(ledger).toHaveLength(batches.length);
    expect(ledger.reduce((a, l) => a + l.amount, 0)).toBe(-(20 * 2 + 2 + 10 * 3));
    expect(new Set(ledger.map((l) => l.key))).toEqual(new Set(batches.map((b) => `usage_batch:${b.id}`)));
    const usage = await usageOf(c.orgId);
    expect(usage).toHaveLength(31);
    for (const b of batches) expect(usage.filter((u) => u.batch_id === b.id)).toHaveLength(b.calls);
    const [org] = await sql<{ credit: number }>(
      stack.db.url,
      'select credit_cents::int as credit from orgs where id = $1',
      [c.orgId],
    );
    expect(org!.credit).toBe(1_000 - 72);
    const report = await stack.services.reconciliation.run();
    expect(report, JSON.stringify(report)).toMatchObject({ ok: true });
  });

  it('a prepaid org short of credit inside a batch: the call is charged what is left, the rest is uncollected', async () => {
    const c = await consumer(5);
    const batches = await commitFourCalls(c, providerA);
    // The calls paid from credit and the call with a billable part are two batches (they are collected differently);
    // the call charged nothing is in none.
    expect(shapeOf(batches)).toEqual([
      { n: 2, charged: 4, credit: 4, billable: 0 },
      { n: 1, charged: 1, credit: 1, billable: 1 },
    ]);
    expect(await ledgerOf(c.orgId)).toEqual([
      { amount: -4, after: 1, key: `usage_batch:${batches[0]!.id}`, memo: '2 paid calls' },
      { amount: -1, after: 0, key: `usage_batch:${batches[1]!.id}`, memo: '1 paid call' },
    ]);
    expect((await usageOf(c.orgId)).map((u) => u.batch_id)).toEqual([
      batches[0]!.id,
      batches[0]!.id,
      batches[1]!.id,
      null,
    ]);
    const accruals = await sql<{ gross: number }>(
      stack.db.url,
      'select gross_cents::int as gross from earning_accruals where consumer_org_id = $1 order by gross_cents desc',
      [c.orgId],
    );
    expect(accruals.map((a) => a.gross)).toEqual([4, 1]);
    const report = await stack.services.reconciliation.run();
    expect(report, JSON.stringify(report)).toMatchObject({ ok: true });
  });

  it('a card-billed org crossing zero in one statement: a collected batch and a billed batch, exact balances', async () => {
    const c = await consumer(5, 'card');
    const batches = await commitFourCalls(c, providerB);
    expect(shapeOf(batches)).toEqual([
      { n: 2, charged: 4, credit: 4, billable: 0 },
      { n: 2, charged: 4, credit: 1, billable: 3 },
    ]);
    expect(await ledgerOf(c.orgId)).toEqual([
      { amount: -4, after: 1, key: `usage_batch:${batches[0]!.id}`, memo: '2 paid calls' },
      { amount: -4, after: -3, key: `usage_batch:${batches[1]!.id}`, memo: '2 paid calls' },
    ]);
    expect((await usageOf(c.orgId)).every((u) => u.batch_id !== null)).toBe(true);
    const report = await stack.services.reconciliation.run();
    expect(report, JSON.stringify(report)).toMatchObject({ ok: true });
  });

  it('a chargeback reverses each provider its net share of the batches the disputed credit paid for', async () => {
    const c = await consumer(1_000);
    const since = new Date(Date.now() - 60_000);
    // Ten 5-cent calls (fee 1 each) alternating between the two providers: net 4 a call, 20 for each provider.
    const w = committer();
    await Promise.all(Array.from({ length: 10 }, (_, i) => w.commit(record(c, i % 2 ? providerB : providerA, 5))));
    await stack.services.earnings.foldAll();
    const balances = () =>
      sql<{ id: string; credit: number }>(
        stack.db.url,
        'select id, credit_cents::int as credit from orgs where id = any($1) order by id',
        [[providerA.orgId, providerB.orgId]],
      );
    const before = new Map((await balances()).map((o) => [o.id, o.credit]));
    const reverse = (disputeId: string, creditCents: number) =>
      stack.services.orm.em.fork().transactional((tem) =>
        stack.services.earnings.reverseDisputed(tem, {
          disputeId,
          payment: { id: `pay_${disputeId}`, orgId: c.orgId, kind: 'checkout', creditCents, createdAt: since },
          reclaimedCents: 0,
        }),
      );
    // The disputed purchase paid for half of the batch: half of each provider's net (in proportion, floored).
    const half = await reverse(newId('event'), 25);
    expect(half.sort((a, b) => a.providerOrgId.localeCompare(b.providerOrgId))).toEqual(
      [providerA.orgId, providerB.orgId].sort().map((providerOrgId) => ({ providerOrgId, cents: 10 })),
    );
    // A purchase that paid for every call of the batch: all of each provider's net, to the cent.
    const all = await reverse(newId('event'), 50);
    expect(all.map((r) => r.cents)).toEqual([20, 20]);
    const after = new Map((await balances()).map((o) => [o.id, o.credit]));
    for (const id of [providerA.orgId, providerB.orgId]) expect(after.get(id)).toBe(before.get(id)! - 30);
    const report = await stack.services.reconciliation.run();
    expect(report, JSON.stringify(report)).toMatchObject({ ok: true });
  });

  it('the books check and reconciliation catch a batch whose ledger row is missing or whose calls do not add up', async () => {
    const c = await consumer(100);
    const w = committer();
    await Promise.all(Array.from({ length: 3 }, () => w.commit(record(c, providerA, 2))));
    const [batch] = await batchesOf(c.orgId);
    // A fourth call pointed at the batch behind the books' back: its rows no longer add up to the batch.
    const stray = record(c, providerA, 2);
    await sql(
      stack.db.url,
      `insert into usage_events (id, org_id, key_id, api_slug, method, path, status, outcome, cost_cents,
         credit_applied_cents, latency_ms, request_id, batch_id, created_at)
       values ($1, $2, $3, 'batches', 'GET', '/x', 200, 'success', 2, 2, 1, $4, $5, $6)`,
      [stray.usageId, c.orgId, c.keyId, stray.requestId, batch!.id, stray.at],
    );
    const report = await stack.services.reconciliation.run();
    expect(report.ok).toBe(false);
    expect(report.unmatched_batches).toEqual([
      expect.objectContaining({ batch_id: batch!.id, usage_rows: 4, calls: 3 }),
    ]);
    const books = await checkBooks(stack.db.url, [], { settleTimeoutMs: 2_000, throwOnFailure: false });
    expect(books.problems.join('\n')).toContain(batch!.id);
    // Undo (usage rows are not append-only), so the suite's closing reconciliation sees clean books.
    await sql(stack.db.url, 'delete from usage_events where id = $1', [stray.usageId]);
    expect((await stack.services.reconciliation.run()).ok).toBe(true);
  });
});
