/**
 * The books check run by the reconciliation schedule (and `npm run admin -- reconcile`): every org's cached balance
 * equals its ledger sum, every succeeded payment that grants credit has exactly its ledger row, and every paid call is
 * booked once and matched by the providers' earnings of the same amount (so usage and earnings cancel across the
 * books).
 *
 * The gateway books paid calls per usage batch (docs/decisions.md, Books per batch): every batch has exactly one
 * consumer ledger row `usage_batch:{id}` of −charged_cents and providers' earnings (booked `provider_earning` rows
 * referenced `usage_batch:{id}`, or still queued in earning_accruals) of charged_cents; while its calls' usage rows are
 * kept (usage partitions are retired, batches are not) exactly `calls` rows point at it, with its credit-applied and
 * billable sums; and every paid success row of a call that was charged is in a batch (or, booked before batches, has
 * its own `usage:{id}` debit). Calls booked per call (`usage:{id}`) are matched to `earning:{id}` as before.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../clock.js';
import type { LedgerDrift, LedgerService } from './ledger.service.js';
import type { Logger } from '../logger.js';

/** Calls booked alone (`usage:{id}`, before batches) whose debit has no provider earning of the same size. */
export const UNMATCHED_CALLS_SQL = `
select usage_id, coalesce(u.cents, 0)::bigint as usage_cents, coalesce(e.cents, 0)::bigint as earning_cents
  from (select substr(idempotency_key, 7) as usage_id, -amount_cents as cents from ledger_entries
         where kind = 'usage' and idempotency_key like 'usage:%') u
  full join (select substr(idempotency_key, 9) as usage_id, amount_cents as cents from ledger_entries
         where kind = 'provider_earning' and idempotency_key like 'earning:%' and reference like 'usage:%'
         union all
         -- Earnings still queued for the providers' ledgers (folded within seconds) count as booked.
         select usage_id, gross_cents from earning_accruals where batch_id is null) e using (usage_id)
 where coalesce(u.cents, 0) <> coalesce(e.cents, 0)
 limit 1000`;

/**
 * Usage batches not tied to their books: a batch without exactly one ledger row of −charged_cents, whose earnings do
 * not add up to charged_cents, or whose usage rows (while any are kept) are not `calls` rows of its credit-applied and
 * billable sums; and a `usage_batch:` ledger row without its batch.
 */
export const UNMATCHED_BATCHES_SQL = `
with ledger as (
  select substr(idempotency_key, 13) as batch_id, org_id, count(*) as n, -sum(amount_cents) as cents
    from ledger_entries where kind = 'usage' and idempotency_key like 'usage_batch:%' group by 1, 2
),
earned as (
  select batch_id, sum(cents) as cents from (
    select substr(reference, 13) as batch_id, amount_cents as cents from ledger_entries
     where kind = 'provider_earning' and reference like 'usage_batch:%'
    union all
    select batch_id, gross_cents from earning_accruals where batch_id is not null) e group by batch_id
),
calls as (
  select batch_id, count(*) as n, sum(credit_applied_cents) as credit, sum(billable_cents) as billable,
         sum(cost_cents) as cost, bool_and(outcome = 'success') as success, count(distinct org_id) as orgs,
         min(org_id) as org_id
    from usage_events where batch_id is not null group by batch_id
)
select coalesce(b.id, l.batch_id) as batch_id, coalesce(b.org_id, l.org_id) as org_id, b.calls,
       b.charged_cents::bigint as charged_cents, coalesce(l.cents, 0)::bigint as ledger_cents,
       coalesce(l.n, 0)::int as ledger_rows, coalesce(e.cents, 0)::bigint as earning_cents,
       coalesce(c.n, 0)::int as usage_rows
  from usage_batches b
  full join ledger l on l.batch_id = b.id and l.org_id = b.org_id
  left join earned e on e.batch_id = coalesce(b.id, l.batch_id)
  left join calls c on c.batch_id = coalesce(b.id, l.batch_id)
 where b.id is null or l.batch_id is null or l.n <> 1 or l.cents <> b.charged_cents
    or coalesce(e.cents, 0) <> b.charged_cents
    or (c.n > 0 and (c.n <> b.calls or c.credit <> b.credit_applied_cents or c.billable <> b.billable_cents
                     or c.cost <> b.credit_applied_cents + b.billable_cents or not c.success or c.orgs <> 1
                     or c.org_id <> b.org_id))
    or b.charged_cents < b.credit_applied_cents or b.charged_cents > b.credit_applied_cents + b.billable_cents
 limit 1000`;

/**
 * Paid success rows in no batch and with no debit of their own: a call that was charged must be in a batch. A call
 * charged nothing (a prepaid org with no credit left when it was booked: credit applied 0) has no debit to tie.
 * Usage rows pointing at a batch that does not exist are listed too.
 */
export const UNBATCHED_CALLS_SQL = `
select u.id as usage_id, u.org_id, u.cost_cents::bigint as cost_cents, u.batch_id from usage_events u
 where u.outcome = 'success' and u.cost_cents > 0
   and ((u.batch_id is null
         and not (u.credit_applied_cents = 0
                  and exists (select 1 from orgs o where o.id = u.org_id and o.billing_mode = 'prepaid'))
         and not exists (select 1 from ledger_entries l where l.org_id = u.org_id and l.idempotency_key = 'usage:' || u.id))
     or (u.batch_id is not null and not exists (select 1 from usage_batches b where b.id = u.batch_id)))
 limit 1000`;

export interface ReconciliationReport {
  checked_at: string;
  orgs_checked: number;
  ok: boolean;
  drift: LedgerDrift[];
  unbooked_payments: { payment_id: string; org_id: string; credit_cents: number }[];
  /** Calls booked alone whose usage debit (`usage:{id}`) has no provider earning (`earning:{id}`) of the same size. */
  unmatched_calls: { usage_id: string; usage_cents: number; earning_cents: number }[];
  /** Usage batches not tied to their one ledger row, their earnings or their usage rows (UNMATCHED_BATCHES_SQL). */
  unmatched_batches: {
    batch_id: string;
    org_id: string;
    calls: number | null;
    charged_cents: number | null;
    ledger_cents: number;
    ledger_rows: number;
    earning_cents: number;
    usage_rows: number;
  }[];
  /** Paid calls that were charged but are in no batch (and have no debit of their own), or in a missing batch. */
  unbatched_calls: { usage_id: string; org_id: string; cost_cents: number; batch_id: string | null }[];
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export class ReconciliationService {
  constructor(private readonly deps: { orm: MikroORM; ledger: LedgerService; clock: Clock; logger: Logger }) {}

  async run(): Promise<ReconciliationReport> {
    const em = this.deps.orm.em.fork();
    const drift = await this.deps.ledger.findDrift();
    const unbooked = await em.execute<{ id: string; org_id: string; credit_cents: string }[]>(
      `select p.id, p.org_id, p.credit_cents from payments p
        where p.status = 'succeeded' and p.kind in ('checkout', 'auto_reload', 'usage_charge')
          and not exists (select 1 from ledger_entries l where l.org_id = p.org_id and l.idempotency_key = 'payment:' || p.id)`,
    );
    const unmatched =
      await em.execute<{ usage_id: string; usage_cents: string; earning_cents: string }[]>(UNMATCHED_CALLS_SQL);
    const batches = await em.execute<Record<string, unknown>[]>(UNMATCHED_BATCHES_SQL);
    const unbatched =
      await em.execute<{ usage_id: string; org_id: string; cost_cents: string; batch_id: string | null }[]>(
        UNBATCHED_CALLS_SQL,
      );
    const [count] = await em.execute<{ n: string }[]>('select count(*) as n from orgs');
    const report: ReconciliationReport = {
      checked_at: this.deps.clock.now().toISOString(),
      orgs_checked: Number(count?.n ?? 0),
      ok:
        drift.length === 0 &&
        unbooked.length === 0 &&
        unmatched.length === 0 &&
        batches.length === 0 &&
        unbatched.length === 0,
      drift,
      unbooked_payments: unbooked.map((u) => ({
        payment_id: u.id,
        org_id: u.org_id,
        credit_cents: Number(u.credit_cents),
      })),
      unmatched_calls: unmatched.map((u) => ({
        usage_id: u.usage_id,
        usage_cents: Number(u.usage_cents),
        earning_cents: Number(u.earning_cents),
      })),
      unmatched_batches: batches.map((b) => ({
        batch_id: String(b.batch_id),
        org_id: String(b.org_id),
        calls: num(b.calls),
        charged_cents: num(b.charged_cents),
        ledger_cents: Number(b.ledger_cents),
        ledger_rows: Number(b.ledger_rows),
        earning_cents: Number(b.earning_cents),
        usage_rows: Number(b.usage_rows),
      })),
      unbatched_calls: unbatched.map((u) => ({
        usage_id: u.usage_id,
        org_id: u.org_id,
        cost_cents: Number(u.cost_cents),
        batch_id: u.batch_id,
      })),
    };
    if (!report.ok) this.deps.logger.error({ reconciliation: report }, 'the books do not balance');
    return report;
  }
}
