/**
 * The books check for crash tests: what the gateway answered against what Postgres booked, once the booking has
 * settled. A 2xx may reach Postgres a moment after it was sent (a drainer), so the check first waits until every
 * non-replayed 2xx has its usage row and the usage and ledger tables have stopped changing, then asserts:
 *
 * - every non-replayed 2xx has exactly one `success` usage row (by request_id) with the cost it announced, and, when
 *   that cost is above 0, the row is in exactly one usage batch (docs/decisions.md, Books per batch); a replay's
 *   original call is booked;
 * - every batch is tied to its books: exactly one ledger debit `usage_batch:{id}` of −charged, charged equal to the
 *   cost of its calls, `calls` success rows of one org pointing at it, its earnings (booked or queued) equal to
 *   charged; no ledger debit without its batch, no paid success row outside a batch;
 * - nothing is charged twice (no request_id with two success rows, no ledger key with two debits);
 * - a charge nobody was told about (a success row behind no 2xx) only exists for a call whose answer was lost (no
 *   answer at all, or a 503 "outcome unknown"), never more of them than such calls;
 * - every org's `credit_cents` equals its ledger sum, no prepaid org is negative, no key spent past its budget, a
 *   leaf key's `spent_cents` equals its success rows' cost;
 * - the product's own reconciliation (core/billing/reconciliation.service.ts): no unbooked payment, every batch tied
 *   to its books (UNMATCHED_BATCHES_SQL), and every usage debit of a call booked alone matched by its earning.
 */
import pg from 'pg';
import { Redis } from 'ioredis';
import { UNMATCHED_BATCHES_SQL, UNMATCHED_CALLS_SQL } from '../../core/billing/reconciliation.service.js';
import type { Services } from '../../platform/services.js';
import { expect } from 'vitest';

/** One answer of the gateway as the load loop recorded it. */
export interface CallAnswer {
  /** HTTP status, or 0 when no answer arrived (connection refused/reset, timeout). */
  status: number;
  /** meta.request_id (or the X-Request-Id header) when an answer arrived. */
  requestId?: string;
  costCents?: number;
  replayed?: boolean;
  /** A replay's meta.original_request_id. */
  originalRequestId?: string;
  /** The error code of a non-2xx envelope. */
  code?: string;
}

export interface BooksReport {
  ok: boolean;
  problems: string[];
  settledAfterMs: number;
  answers: { ok2xx: number; replayed: number; lost: number; ambiguous503: number };
  usage: { success: number; failed: number; chargedCents: number };
  /** Success rows no 2xx announced (calls whose answer was lost), by request_id. */
  unannouncedCharges: string[];
  orgsChecked: number;
}

interface Snapshot {
  usage: number;
  success: number;
  ledger: number;
  ledgerSum: number;
  accruals: number;
  batches: number;
  missing: number;
}

const MAX_LISTED = 10;

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const is2xx = (a: CallAnswer) => a.status >= 200 && a.status < 300;

/**
 * Wait for the books to settle, check them (see the file header) and return the report; throws a readable error
 * listing every problem unless `throwOnFailure` is false.
 */
export async function checkBooks(
  databaseUrl: string,
  answers: readonly CallAnswer[],
  options: { settleTimeoutMs?: number; throwOnFailure?: boolean } = {},
): Promise<BooksReport> {
  const started = Date.now();
  const ok = answers.filter(is2xx);
  const booked = ok.filter((a) => !a.replayed && a.requestId);
  const bookedIds = booked.map((a) => a.requestId!);
  const problems: string[] = [];
  for (const a of ok) if (!a.requestId) problems.push(`a ${a.status} answer carried no request_id`);

  // 1. Settle: every announced call booked and nothing moving for ~1.5 s (or the timeout).
  const snapshot = (c: pg.Client): Promise<Snapshot> =>
    c
      .query<{ [k in keyof Snapshot]: string }>(
        `select (select count(*) from usage_events) as usage,
                (select count(*) from usage_events where outcome = 'success') as success,
                (select count(*) from ledger_entries) as ledger,
                (select coalesce(sum(amount_cents), 0) from ledger_entries) as "ledgerSum",
                (select count(*) from earning_accruals) as accruals,
                (select count(*) from usage_batches) as batches,
                (select count(*) from unnest($1::text[]) r(id)
                  where not exists (select 1 from usage_events u where u.request_id = r.id and u.outcome = 'success'))
                  as missing`,
        [bookedIds],
      )
      .then(({ rows: [r] }) => ({
        usage: Number(r!.usage),
        success: Number(r!.success),
        ledger: Number(r!.ledger),
        ledgerSum: Number(r!.ledgerSum),
        accruals: Number(r!.accruals),
        batches: Number(r!.batches),
        missing: Number(r!.missing),
      }));
  const timeout = options.settleTimeoutMs ?? 15_000;
  let last = '';
  let stableSince = Date.now();
  for (;;) {
    const snap = await withClient(databaseUrl, snapshot).catch((err: unknown) => ({ error: String(err) }));
    const key = JSON.stringify(snap);
    if (key !== last) {
      last = key;
      stableSince = Date.now();
    }
    const settled = !('error' in snap) && snap.missing === 0 && Date.now() - stableSince >= 1_500;
    if (settled || Date.now() - started > timeout) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const settledAfterMs = Date.now() - started;

  return withClient(databaseUrl, async (c) => {
    const q = async <R extends pg.QueryResultRow>(text: string, params: unknown[] = []) =>
      (await c.query<R>(text, params)).rows;
    const list = (rows: unknown[]) =>
      rows
        .slice(0, MAX_LISTED)
        .map((r) => JSON.stringify(r))
        .join('; ') + (rows.length > MAX_LISTED ? `; … ${rows.length - MAX_LISTED} more` : '');

    // 2. Every announced (non-replayed) 2xx: one success row of its cost, in a batch when cost > 0.
    const rows = await q<{ id: string; request_id: string; cost_cents: string; n: string; batch: string | null }>(
      `select u.id, u.request_id, u.cost_cents, count(*) over (partition by u.request_id) as n, b.id as batch
         from usage_events u left join usage_batches b on b.id = u.batch_id and b.org_id = u.org_id
        where u.outcome = 'success' and u.request_id = any($1::text[])`,
      [bookedIds],
    );
    const byRequest = new Map<string, { id: string; cost: number; n: number; batch: string | null }>();
    for (const r of rows) {
      byRequest.set(r.request_id, { id: r.id, cost: Number(r.cost_cents), n: Number(r.n), batch: r.batch });
    }
    const missing: string[] = [];
    const wrongCost: unknown[] = [];
    const wrongDebit: unknown[] = [];
    for (const a of booked) {
      const row = byRequest.get(a.requestId!);
      if (!row) {
        missing.push(a.requestId!);
        continue;
      }
      const cost = a.costCents ?? 0;
      if (row.cost !== cost) wrongCost.push({ request_id: a.requestId, announced: cost, booked: row.cost });
      if (cost > 0 && row.batch === null) wrongDebit.push({ request_id: a.requestId, usage_id: row.id, cost });
    }
    if (missing.length) problems.push(`${missing.length} 2xx answers have no success usage row: ${list(missing)}`);
    if (wrongCost.length)
      problems.push(`${wrongCost.length} usage rows differ from the announced cost: ${list(wrongCost)}`);
    if (wrongDebit.length)
      problems.push(`${wrongDebit.length} paid 2xx answers are in no usage batch: ${list(wrongDebit)}`);

    // A replay's original call is booked (the original may be any answer of this run, or one whose answer was lost).
    const originals = ok.filter((a) => a.replayed).map((a) => a.originalRequestId ?? '');
    const [unbookedOriginals] = await q<{ ids: string[] | null }>(
      `select array_agg(r.id) as ids from (select distinct unnest($1::text[]) as id) r
        where not exists (select 1 from usage_events u where u.request_id = r.id and u.outcome = 'success')`,
      [originals],
    );
    if (unbookedOriginals?.ids?.length) {
      problems.push(
        `${unbookedOriginals.ids.length} replays answer an original that is not booked: ${list(unbookedOriginals.ids)}`,
      );
    }

    // 3. Nothing charged twice; every batch tied to its one debit, its calls and its earnings.
    const twice = await q(
      `select request_id, count(*)::int as n from usage_events where outcome = 'success'
        group by request_id having count(*) > 1 limit 50`,
    );
    if (twice.length) problems.push(`request_ids with more than one success row: ${list(twice)}`);
    const doubleDebits = await q(
      `select idempotency_key, count(*)::int as n from ledger_entries where kind = 'usage'
        group by idempotency_key having count(*) > 1 limit 50`,
    );
    if (doubleDebits.length) problems.push(`usage debits booked more than once: ${list(doubleDebits)}`);
    const strayDebits = await q(
      `select l.idempotency_key, l.amount_cents::int as amount from ledger_entries l
        where l.kind = 'usage' and l.idempotency_key like 'usage%'
          and not exists (select 1 from usage_batches b where l.idempotency_key = 'usage_batch:' || b.id
                                                          and b.org_id = l.org_id)
        limit 50`,
    );
    if (strayDebits.length) problems.push(`usage debits without their batch: ${list(strayDebits)}`);
    const untied = await q(UNMATCHED_BATCHES_SQL);
    if (untied.length) problems.push(`usage batches not tied to their books: ${list(untied)}`);
    const wrongCharge = await q(
      `select b.id, b.charged_cents::bigint as charged, c.cost::bigint as cost from usage_batches b
         join (select batch_id, sum(cost_cents) as cost from usage_events where batch_id is not null group by batch_id) c
           on c.batch_id = b.id
        where c.cost <> b.charged_cents limit 50`,
    );
    if (wrongCharge.length) problems.push(`batches charged other than their calls' cost: ${list(wrongCharge)}`);
    const unbatched = await q(
      `select u.id, u.request_id, u.cost_cents::int as cost from usage_events u
        where u.outcome = 'success' and u.cost_cents > 0
          and not exists (select 1 from usage_batches b where b.id = u.batch_id and b.org_id = u.org_id)
        limit 50`,
    );
    if (unbatched.length) problems.push(`paid success rows in no batch: ${list(unbatched)}`);

    // 4. Charges nobody was told about: only for calls whose answer was lost.
    const unannounced = await q<{ request_id: string }>(
      `select request_id from usage_events where outcome = 'success'
          and not (request_id = any($1::text[]))`,
      [ok.filter((a) => !a.replayed && a.requestId).map((a) => a.requestId!)],
    );
    const answeredStatus = new Map(answers.filter((a) => a.requestId).map((a) => [a.requestId!, a.status]));
    const lost = answers.filter((a) => a.status === 0).length;
    const ambiguous = answers.filter((a) => a.status === 503).length;
    const toldOtherwise = unannounced.filter((r) => {
      const status = answeredStatus.get(r.request_id);
      return status !== undefined && status !== 503;
    });
    if (toldOtherwise.length) {
      problems.push(
        `calls charged although their answer was neither 2xx nor 503: ${list(toldOtherwise.map((r) => ({ ...r, status: answeredStatus.get(r.request_id) })))}`,
      );
    }
    const unanswered = unannounced.filter((r) => !answeredStatus.has(r.request_id));
    if (unanswered.length > lost) {
      problems.push(
        `${unanswered.length} charged calls were never answered, but only ${lost} answers were lost: ${list(unanswered.map((r) => r.request_id))}`,
      );
    }

    // 5. Balances, budgets, and the product's reconciliation.
    const drift = await q(
      `select o.id, o.credit_cents::bigint as credit, coalesce(l.sum, 0)::bigint as ledger_sum from orgs o
         left join (select org_id, sum(amount_cents) as sum from ledger_entries group by org_id) l on l.org_id = o.id
        where o.credit_cents <> coalesce(l.sum, 0)`,
    );
    if (drift.length) problems.push(`orgs whose credit_cents is not their ledger sum: ${list(drift)}`);
    const negative = await q(
      `select id, credit_cents::bigint as credit from orgs where billing_mode = 'prepaid' and credit_cents < 0`,
    );
    if (negative.length) problems.push(`prepaid orgs below zero: ${list(negative)}`);
    const overBudget = await q(
      `select id, budget_cents::bigint as budget, spent_cents::bigint as spent from api_keys
        where budget_cents is not null and spent_cents > budget_cents`,
    );
    if (overBudget.length) problems.push(`keys spent past their budget: ${list(overBudget)}`);
    const keySpend = await q(
      `select k.id, k.spent_cents::bigint as spent, coalesce(s.cost, 0)::bigint as usage_cost from api_keys k
         left join (select key_id, sum(cost_cents) as cost from usage_events where outcome = 'success' group by key_id) s
           on s.key_id = k.id
        where not exists (select 1 from api_keys c where c.parent_key_id = k.id)
          and k.spent_cents <> coalesce(s.cost, 0)`,
    );
    if (keySpend.length) problems.push(`keys whose spent_cents is not their calls' cost: ${list(keySpend)}`);
    const unbooked = await q(
      `select p.id, p.org_id, p.credit_cents from payments p
        where p.status = 'succeeded' and p.kind in ('checkout', 'auto_reload', 'usage_charge')
          and not exists (select 1 from ledger_entries l where l.org_id = p.org_id and l.idempotency_key = 'payment:' || p.id)`,
    );
    if (unbooked.length) problems.push(`succeeded payments without their ledger row: ${list(unbooked)}`);
    const unmatched = await q(UNMATCHED_CALLS_SQL);
    if (unmatched.length) problems.push(`usage debits not matched by an earning: ${list(unmatched)}`);

    const [usage] = await q<{ success: string; failed: string; charged: string }>(
      `select count(*) filter (where outcome = 'success') as success, count(*) filter (where outcome = 'failed') as failed,
              coalesce(sum(cost_cents) filter (where outcome = 'success'), 0) as charged from usage_events`,
    );
    const [orgs] = await q<{ n: string }>('select count(*) as n from orgs');
    const report: BooksReport = {
      ok: problems.length === 0,
      problems,
      settledAfterMs,
      answers: {
        ok2xx: ok.length,
        replayed: ok.filter((a) => a.replayed).length,
        lost,
        ambiguous503: ambiguous,
      },
      usage: { success: Number(usage!.success), failed: Number(usage!.failed), chargedCents: Number(usage!.charged) },
      unannouncedCharges: unannounced.map((r) => r.request_id),
      orgsChecked: Number(orgs!.n),
    };
    if (!report.ok && options.throwOnFailure !== false) {
      throw new Error(
        `The books do not balance (settled after ${settledAfterMs} ms):\n- ${problems.join('\n- ')}\n` +
          `answers: ${JSON.stringify(report.answers)}, usage: ${JSON.stringify(report.usage)}`,
      );
    }
    return report;
  });
}

/** One open reservation: its `sp:{N}:resv` set, the member, and when it expires (the sweeper's deadline). */
export interface OpenReservation {
  key: string;
  member: string;
  reservationId: string;
  /** The client's idempotency key as the member carries it ('' for none). */
  idempotencyKey: string;
  expiresAt: number;
}

/** Every open reservation in a Redis (the `sp:{N}:resv` sets under `prefix`; see core/spend/redis-spend-store.ts). */
export async function openReservations(redisUrl: string, prefix: string): Promise<OpenReservation[]> {
  const client = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const open: OpenReservation[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}sp:{*}:resv`, 'COUNT', '1000');
      cursor = next;
      for (const key of keys) {
        const flat = await client.zrange(key, '0', '-1', 'WITHSCORES');
        for (let i = 0; i < flat.length; i += 2) {
          const member = flat[i]!;
          const fields = member.split('|');
          open.push({
            key,
            member,
            reservationId: fields[0]!,
            idempotencyKey: fields.slice(6).join('|'),
            expiresAt: Number(flat[i + 1]),
          });
        }
      }
    } while (cursor !== '0');
    return open;
  } finally {
    client.disconnect();
  }
}

/**
 * The end-of-file books check of an in-process stack: queued earnings folded, then the product's own reconciliation
 * (every org's balance equals its ledger sum, every batch tied to its books) must come out clean.
 */
export async function expectReconciled(
  services: Pick<Services, 'earnings' | 'reconciliation'> | undefined,
): Promise<void> {
  if (!services) return;
  await services.earnings.foldAll();
  const report = await services.reconciliation.run();
  expect(report.ok, JSON.stringify(report)).toBe(true);
}

/** The usage drain flushed, no org's cached balance differs from its ledger sum (`ledger.findDrift()`). */
export async function expectNoDrift(
  gateway: { drain: { flush: () => Promise<unknown> } } | undefined,
  services: Pick<Services, 'ledger'> | undefined,
): Promise<void> {
  await gateway?.drain.flush();
  if (services) expect(await services.ledger.findDrift()).toEqual([]);
}
