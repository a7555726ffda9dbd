/**
 * The books check run by the reconciliation schedule (and `npm run admin -- reconcile`): every org's cached balance
 * equals its ledger sum, every succeeded payment that grants credit has exactly its ledger row, and every paid call's
 * usage debit is matched by the provider's earning of the same amount (so usage and earnings cancel across the books).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../clock.js';
import type { LedgerDrift, LedgerService } from '../ledger/ledger.service.js';
import type { Logger } from '../logger.js';

export interface ReconciliationReport {
  checked_at: string;
  orgs_checked: number;
  ok: boolean;
  drift: LedgerDrift[];
  unbooked_payments: { payment_id: string; org_id: string; credit_cents: number }[];
  /** Calls whose usage debit (`usage:{id}`) has no provider earning (`earning:{id}`) of the same size. */
  unmatched_calls: { usage_id: string; usage_cents: number; earning_cents: number }[];
}

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
    const unmatched = await em.execute<{ usage_id: string; usage_cents: string; earning_cents: string }[]>(
      `select usage_id, coalesce(u.cents, 0) as usage_cents, coalesce(e.cents, 0) as earning_cents
         from (select substr(idempotency_key, 7) as usage_id, -amount_cents as cents from ledger_entries
                where kind = 'usage' and idempotency_key like 'usage:%') u
         full join (select substr(idempotency_key, 9) as usage_id, amount_cents as cents from ledger_entries
                where kind = 'provider_earning' and idempotency_key like 'earning:%'
                union all
                -- Earnings still queued for the providers' ledgers (folded within seconds) count as booked.
                select usage_id, gross_cents from earning_accruals) e using (usage_id)
        where coalesce(u.cents, 0) <> coalesce(e.cents, 0)
        limit 1000`,
    );
    const [count] = await em.execute<{ n: string }[]>('select count(*) as n from orgs');
    const report: ReconciliationReport = {
      checked_at: this.deps.clock.now().toISOString(),
      orgs_checked: Number(count?.n ?? 0),
      ok: drift.length === 0 && unbooked.length === 0 && unmatched.length === 0,
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
    };
    if (!report.ok) this.deps.logger.error({ reconciliation: report }, 'the books do not balance');
    return report;
  }
}
