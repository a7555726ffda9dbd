// The usage committer's lean statement (core/spend/usage-lean-commit.ts, issue 32) books exactly what the full
// statement books: the same batch of calls (two consumers, one prepaid with credit to spare, one card-billed crossing
// zero inside the batch; two providers; a key with an ancestor; free and failed calls) committed once through each,
// on separate but identical accounts, gives the same ledger rows, usage batches, accruals, balances, key and day
// spend, usage rows and answers. Real Postgres; reconciliation clean afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageCommitter, type CallRecord } from '../../../core/spend/usage-committer.js';
import { leanEligible } from '../../../core/spend/usage-lean-commit.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { callRecord } from '../../helpers/call-records.js';
import { sql } from '../../helpers/db.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

const FEE = 20;

describe('lean usage commit', () => {
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

  interface Accounts {
    prepaid: Person;
    childKeyId: string;
    card: Person;
  }

  async function accounts(): Promise<Accounts> {
    const prepaid = await createPerson(stack.services);
    await stack.services.ledger.post({ orgId: prepaid.orgId, kind: 'grant', amountCents: 1_000 });
    const em = stack.services.orm.em.fork();
    const child = stack.services.keys.create(em, {
      orgId: prepaid.orgId,
      name: 'child',
      scopes: ['proxy:call'],
      source: 'api',
    });
    await em.flush();
    const card = await createPerson(stack.services);
    await stack.services.ledger.post({ orgId: card.orgId, kind: 'grant', amountCents: 3 });
    await sql(stack.db.url, "update orgs set billing_mode = 'card' where id = $1", [card.orgId]);
    return { prepaid, childKeyId: child.key.id, card };
  }

  /** The batch, with each paid call's split as the fast state's settle decides it. */
  function calls(a: Accounts, base: number): CallRecord[] {
    const at = (i: number) => new Date(base + i);
    const call = (
      i: number,
      who: Person,
      provider: Person,
      price: number,
      extra: Partial<CallRecord> = {},
    ): CallRecord =>
      callRecord(
        {
          orgId: who.orgId,
          keyId: who.keyId,
          apiId: 'api_lean',
          apiSlug: 'lean',
          endpointId: 'ep_lean',
          providerOrgId: provider.orgId,
          path: '/x',
          priceCents: price,
          creditAppliedCents: price,
          billableCents: 0,
          ...extra,
        },
        at(i),
      );
    return [
      call(0, a.prepaid, providerA, 3),
      call(1, a.card, providerA, 2, { creditAppliedCents: 2, billableCents: 0 }),
      call(2, a.prepaid, providerB, 7, { keyId: a.childKeyId, ancestorKeyIds: [a.prepaid.keyId] }),
      call(3, a.prepaid, providerA, 0, { creditAppliedCents: 0 }),
      call(4, a.card, providerB, 2, { creditAppliedCents: 1, billableCents: 1 }),
      call(5, a.prepaid, providerA, 0, {
        outcome: 'failed',
        status: 502,
        priceCentsEffective: 3,
        creditAppliedCents: undefined,
        billableCents: undefined,
        idempotencyKey: 'failed-once',
      }),
      call(6, a.card, providerA, 5, { creditAppliedCents: 0, billableCents: 5 }),
      call(7, a.prepaid, providerB, 1, { keyId: a.childKeyId, ancestorKeyIds: [a.prepaid.keyId] }),
    ];
  }

  async function books(a: Accounts) {
    const orgs = [a.prepaid.orgId, a.card.orgId];
    const keys = [a.prepaid.keyId, a.childKeyId, a.card.keyId];
    const rows = async (text: string, values: unknown[]) =>
      await sql<Record<string, unknown>>(stack.db.url, text, values);
    return {
      ledger: await rows(
        `select org_id = $1 as prepaid, amount_cents::int as amount, balance_after_cents::int as after, memo
           from ledger_entries where org_id = any($2) and kind = 'usage' order by created_at, id`,
        [a.prepaid.orgId, orgs],
      ),
      batches: await rows(
        `select org_id = $1 as prepaid, calls, charged_cents::int as charged, credit_applied_cents::int as credit,
                billable_cents::int as billable
           from usage_batches where org_id = any($2) order by org_id = $1, billable_cents > 0`,
        [a.prepaid.orgId, orgs],
      ),
      accruals: await rows(
        `select a.provider_org_id = $1 as provider_a, a.consumer_org_id = $2 as prepaid, a.gross_cents::int as gross,
                a.fee_cents::int as fee, b.billable_cents > 0 as billed
           from earning_accruals a join usage_batches b on b.id = a.batch_id
          where a.consumer_org_id = any($3) order by 1, 2, 5`,
        [providerA.orgId, a.prepaid.orgId, orgs],
      ),
      orgs: await rows(
        `select id = $1 as prepaid, credit_cents::int as credit, balance_version::int as version
           from orgs where id = any($2) order by 1`,
        [a.prepaid.orgId, orgs],
      ),
      keys: await rows(
        `select array_position($1::text[], id::text) as which, spent_cents::int as spent, last_used_at is not null as used
           from api_keys where id = any($1) order by 1`,
        [keys],
      ),
      days: await rows(
        `select array_position($1::text[], id::text) as which, spent_day as day, day_spent_cents::int as spent
           from api_keys where id = any($1) order by 1`,
        [keys],
      ),
      usage: await rows(
        `select latency_ms, outcome, status, cost_cents::int as cost, price_cents_effective::int as eff,
                credit_applied_cents::int as credit, billable_cents::int as billable, batch_id is not null as booked,
                idempotency_key
           from usage_events where org_id = any($1) order by created_at`,
        [orgs],
      ),
    };
  }

  it('books the same rows and answers as the full statement', async () => {
    const leanAccounts = await accounts();
    const fullAccounts = await accounts();
    const base = Date.now();
    const leanBatch = calls(leanAccounts, base);
    const fullBatch = calls(fullAccounts, base + 100);
    expect(leanEligible(leanBatch.map((call) => ({ call })))).toBe(true);

    const make = (lean: boolean) =>
      new UsageCommitter(
        { orm: stack.services.orm, logger: stack.services.logger, feePercent: FEE, prepared: true },
        { lean },
      );
    const lean = make(true);
    const full = make(false);
    const leanAnswers = await Promise.all(leanBatch.map((c) => lean.commit(c)));
    const fullAnswers = await Promise.all(fullBatch.map((c) => full.commit(c)));
    const shape = (answers: typeof leanAnswers) =>
      answers.map((r) => ({ ...r, org: r.org && { ...r.org, creditCents: r.org.creditCents } }));
    expect(shape(leanAnswers)).toEqual(shape(fullAnswers));

    const leanBooks = await books(leanAccounts);
    const fullBooks = await books(fullAccounts);
    expect(leanBooks).toEqual(fullBooks);
    // The figures themselves, so two equally wrong paths cannot pass.
    expect(leanBooks.orgs).toEqual([
      { prepaid: false, credit: 3 - 9, version: 3 + 1 },
      { prepaid: true, credit: 1_000 - 11, version: 3 + 1 },
    ]);
    expect(leanBooks.keys.map((k) => k.spent)).toEqual([11, 8, 9]);
    expect(leanBooks.batches).toEqual([
      { prepaid: false, calls: 1, charged: 2, credit: 2, billable: 0 },
      { prepaid: false, calls: 2, charged: 7, credit: 1, billable: 6 },
      { prepaid: true, calls: 3, charged: 11, credit: 11, billable: 0 },
    ]);
  });

  it('books the same through the unprepared path the embedded database uses', async () => {
    const viaKnex = await accounts();
    const viaFull = await accounts();
    const base = Date.now() + 1_000;
    const make = (lean: boolean) =>
      new UsageCommitter(
        { orm: stack.services.orm, logger: stack.services.logger, feePercent: FEE, prepared: false },
        { lean },
      );
    const lean = make(true);
    await Promise.all(calls(viaKnex, base).map((c) => lean.commit(c)));
    const full = make(false);
    await Promise.all(calls(viaFull, base + 100).map((c) => full.commit(c)));
    expect(await books(viaKnex)).toEqual(await books(viaFull));
  });

  it('leaves to the full statement what only it decides', () => {
    const a = {
      orgId: 'org_x',
      keyId: 'key_x',
      apiId: 'api',
      apiSlug: 's',
      endpointId: 'e',
      providerOrgId: 'org_p',
      path: '/',
    };
    const ok = callRecord({ ...a, priceCents: 1, creditAppliedCents: 1, billableCents: 0 });
    expect(leanEligible([{ call: ok }])).toBe(true);
    expect(leanEligible([{ call: { ...ok, idempotencyKey: 'k' } }])).toBe(false);
    expect(leanEligible([{ call: { ...ok, unsynced: true } }])).toBe(false);
    expect(leanEligible([{ call: { ...ok, creditAppliedCents: undefined } }])).toBe(false);
    expect(
      leanEligible([{ call: { ...ok, priceCents: 0, creditAppliedCents: undefined, billableCents: undefined } }]),
    ).toBe(true);
  });
});
