/**
 * Provider earnings, off the gateway's hot path (DESIGN.md, Money). The gateway books paid calls per usage batch: the
 * consumer's `usage` row per (org, batch), and the provider's earning queued in `earning_accruals`, one per
 * (provider, batch) (core/spend/usage-committer.ts), so no call locks the provider's org row. `fold` moves queued
 * accruals into the providers' ledgers — `provider_earning` (+gross) and `platform_fee` (-fee) rows keyed
 * `earning:{accrual}` / `fee:{accrual}` and referenced `usage_batch:{batch}` (`usage:{id}` for an accrual of one call
 * queued before batches, whose id is its usage id), balances updated with them — and deletes them in the same
 * transaction, so each accrual is booked exactly once whoever folds. The worker folds every second; payouts
 * and the books check fold first.
 *
 * Collection (issue 10, 8b): an earning is payable only once the consumer's money is collected. A call paid from
 * credits (billable_cents = 0) is collected when it is made; a card-billed call (billable_cents > 0) is collected when
 * a usage charge that covers it succeeds (a usage charge covers the debt owed when its payment row is created). A
 * chargeback takes back the providers' net share of the calls the disputed money paid for (`reverseDisputed`).
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { providerEntries } from '../money/split.js';

const FOLD_BATCH = 1_000;

interface AccrualRow {
  id: string;
  batch_id: string | null;
  usage_id: string | null;
  provider_org_id: string;
  gross_cents: string;
  fee_cents: string;
  created_at: string;
}

export class EarningsService {
  constructor(private readonly deps: { orm: MikroORM; logger: Logger }) {}

  /** Fold up to `limit` queued accruals (oldest first); returns how many were folded. */
  async fold(limit = FOLD_BATCH): Promise<number> {
    return this.deps.orm.em.fork().transactional(async (tem) => {
      const taken = await tem.execute<AccrualRow[]>(
        `delete from earning_accruals where id in (
           select id from earning_accruals order by created_at, id limit ? for update skip locked)
         returning id, batch_id, usage_id, provider_org_id, gross_cents, fee_cents, created_at`,
        [limit],
      );
      if (taken.length === 0) return 0;
      taken.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
      const orgIds = [...new Set(taken.map((t) => t.provider_org_id))].sort();
      const locked = await tem.execute<{ id: string; credit_cents: string }[]>(
        `select id, credit_cents from orgs where id in (${orgIds.map(() => '?').join(',')}) order by id for update`,
        orgIds,
      );
      const balance = new Map(locked.map((o) => [o.id, Number(o.credit_cents)]));
      const changes = new Map<string, number>();
      const values: unknown[] = [];
      let n = 0;
      for (const t of taken) {
        for (const entry of providerEntries({
          key: t.id,
          reference: t.batch_id !== null ? `usage_batch:${t.batch_id}` : `usage:${t.usage_id}`,
          providerOrgId: t.provider_org_id,
          grossCents: Number(t.gross_cents),
          feeCents: Number(t.fee_cents),
        })) {
          const after = (balance.get(entry.orgId) ?? 0) + entry.amountCents;
          balance.set(entry.orgId, after);
          changes.set(entry.orgId, (changes.get(entry.orgId) ?? 0) + 1);
          values.push(
            newId('ledgerEntry'),
            entry.orgId,
            entry.kind,
            entry.amountCents,
            after,
            entry.idempotencyKey,
            entry.reference,
            t.created_at,
          );
          n += 1;
        }
      }
      await tem.execute(
        `insert into ledger_entries (id, org_id, kind, amount_cents, balance_after_cents, idempotency_key, reference,
           created_at) values ${Array.from({ length: n }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(',')}`,
        values,
        'run',
      );
      const updates = [...changes.entries()];
      await tem.execute(
        `update orgs o set credit_cents = v.c, balance_version = o.balance_version + v.n, updated_at = now(),
                chargeback_carry_cents = case when v.c >= 0 then 0 else o.chargeback_carry_cents end
           from (values ${updates.map(() => '(?, ?::bigint, ?::bigint)').join(',')}) v(id, c, n) where o.id = v.id`,
        updates.flatMap(([id, count]) => [id, balance.get(id)!, count]),
        'run',
      );
      return taken.length;
    });
  }

  /** Fold until the queue is empty (payouts, the books check, tests). */
  async foldAll(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.fold();
      total += n;
      if (n < FOLD_BATCH) return total;
    }
  }

  /**
   * Net earnings of a provider that are not payable yet: card-billed calls whose usage charge has not succeeded.
   * (Calls still queued are not on the provider's books at all, so they need no subtracting.) The gateway's earnings
   * are per usage batch, and a batch holds either only calls paid from credit or only calls with a billable part
   * (core/spend/usage-committer.ts): a billed batch is collected once a usage charge succeeded at or after its last
   * call. Earnings booked per call (before batches) are matched to their call as before.
   */
  async uncollectedNet(em: EntityManager, providerOrgId: string): Promise<number> {
    const [row] = await em.execute<{ cents: string }[]>(
      `select coalesce(sum(l.amount_cents), 0) as cents
         from ledger_entries l join usage_batches b on b.id = substr(l.reference, 13)
        where l.org_id = ? and l.kind in ('provider_earning', 'platform_fee') and l.reference like 'usage_batch:%'
          and b.billable_cents > 0
          and not exists (select 1 from payments p where p.org_id = b.org_id and p.kind = 'usage_charge'
                           and p.status = 'succeeded' and p.created_at >= b.last_at)`,
      [providerOrgId],
    );
    const [legacy] = await em.execute<{ cents: string }[]>(
      `select coalesce(sum(l.amount_cents), 0) as cents
         from ledger_entries l join usage_events u on u.id = substr(l.reference, 7)
        where l.org_id = ? and l.kind in ('provider_earning', 'platform_fee') and l.reference like 'usage:%'
          and u.billable_cents > 0
          and not exists (select 1 from payments p where p.org_id = u.org_id and p.kind = 'usage_charge'
                           and p.status = 'succeeded' and p.created_at >= u.created_at)`,
      [providerOrgId],
    );
    return Number(row?.cents ?? 0) + Number(legacy?.cents ?? 0);
  }

  /**
   * A chargeback on `payment` took `reclaimedCents` of its credit back from the consumer. The providers' net share of
   * what the disputed money paid for is reversed on their books (ledger `chargeback` rows keyed
   * `dispute:{id}:earnings`): before a payout that lowers what is payable; after one it leaves a negative balance
   * that later earnings pay off. A usage charge paid for the card-billed calls it covered; a credit purchase paid
   * for the calls made with the part of its credit that was already spent (the latest calls since the purchase).
   */
  async reverseDisputed(
    tem: EntityManager,
    input: {
      disputeId: string;
      payment: { id: string; orgId: string; kind: string; creditCents: number; createdAt: Date };
      reclaimedCents: number;
    },
  ): Promise<{ providerOrgId: string; cents: number }[]> {
    const { payment } = input;
    let calls: { id: string; cost_cents: string; batch_id: string | null }[];
    let budget: number;
    if (payment.kind === 'usage_charge') {
      calls = await tem.execute(
        `select u.id, u.cost_cents, u.batch_id from usage_events u
          where u.org_id = ? and u.billable_cents > 0 and u.cost_cents > 0 and u.created_at <= ?
            and u.created_at > coalesce((select max(p.created_at) from payments p where p.org_id = ? and p.kind = 'usage_charge'
                                          and p.status = 'succeeded' and p.created_at < ?), '-infinity')
          order by u.created_at desc, u.id desc`,
        [payment.orgId, payment.createdAt, payment.orgId, payment.createdAt],
      );
      budget = payment.creditCents;
    } else {
      budget = payment.creditCents - input.reclaimedCents;
      if (budget <= 0) return [];
      calls = await tem.execute(
        `select u.id, u.cost_cents, u.batch_id from usage_events u
          where u.org_id = ? and u.cost_cents > 0 and u.billable_cents = 0 and u.created_at >= ?
          order by u.created_at desc, u.id desc limit 10000`,
        [payment.orgId, payment.createdAt],
      );
    }
    // The net share of each call the disputed money paid for (the last one in part), from the rows booked for it.
    const share = new Map<string, number>();
    const paidFor: { id: string; batchId: string | null; portion: number; cost: number }[] = [];
    for (const c of calls) {
      if (budget <= 0) break;
      const cost = Number(c.cost_cents);
      const portion = Math.min(cost, budget);
      budget -= portion;
      paidFor.push({ id: c.id, batchId: c.batch_id, portion, cost });
    }
    if (paidFor.length === 0) return [];
    const add = (providerOrgId: string, cents: number) => {
      if (cents > 0) share.set(providerOrgId, (share.get(providerOrgId) ?? 0) + cents);
    };
    // Calls booked alone (before usage batches): their own earning rows.
    const alone = paidFor.filter((p) => p.batchId === null);
    if (alone.length > 0) {
      const rows = await tem.execute<{ usage_id: string; provider_org_id: string; gross: string; fee: string }[]>(
        `select usage_id, provider_org_id, gross_cents as gross, fee_cents as fee from earning_accruals
          where batch_id is null and usage_id in (${alone.map(() => '?').join(',')})
         union all
         select substr(l.reference, 7), l.org_id, sum(case when l.kind = 'provider_earning' then l.amount_cents else 0 end),
                -sum(case when l.kind = 'platform_fee' then l.amount_cents else 0 end)
           from ledger_entries l
          where l.kind in ('provider_earning', 'platform_fee') and l.reference in (${alone.map(() => '?').join(',')})
          group by l.reference, l.org_id`,
        [...alone.map((p) => p.id), ...alone.map((p) => `usage:${p.id}`)],
      );
      const byCall = new Map(rows.map((r) => [r.usage_id, r]));
      for (const p of alone) {
        const r = byCall.get(p.id);
        if (!r) continue;
        add(r.provider_org_id, Math.floor(((Number(r.gross) - Number(r.fee)) * p.portion) / p.cost));
      }
    }
    // Calls booked in usage batches: each provider's net earning from a batch, in the part of the batch's charge the
    // disputed money paid for (all of it when it paid for every call of the batch).
    const portionOf = new Map<string, number>();
    for (const p of paidFor)
      if (p.batchId !== null) portionOf.set(p.batchId, (portionOf.get(p.batchId) ?? 0) + p.portion);
    if (portionOf.size > 0) {
      const ids = [...portionOf.keys()];
      const rows = await tem.execute<{ batch_id: string; provider_org_id: string; gross: string; fee: string }[]>(
        `select batch_id, provider_org_id, sum(gross_cents) as gross, sum(fee_cents) as fee from earning_accruals
          where batch_id in (${ids.map(() => '?').join(',')}) group by batch_id, provider_org_id
         union all
         select substr(l.reference, 13), l.org_id, sum(case when l.kind = 'provider_earning' then l.amount_cents else 0 end),
                -sum(case when l.kind = 'platform_fee' then l.amount_cents else 0 end)
           from ledger_entries l
          where l.kind in ('provider_earning', 'platform_fee') and l.reference in (${ids.map(() => '?').join(',')})
          group by l.reference, l.org_id`,
        [...ids, ...ids.map((id) => `usage_batch:${id}`)],
      );
      const gross = new Map<string, number>();
      for (const r of rows) gross.set(r.batch_id, (gross.get(r.batch_id) ?? 0) + Number(r.gross));
      for (const r of rows) {
        const total = gross.get(r.batch_id)!;
        const portion = Math.min(portionOf.get(r.batch_id)!, total);
        add(r.provider_org_id, Math.floor(((Number(r.gross) - Number(r.fee)) * portion) / total));
      }
    }
    const reversed: { providerOrgId: string; cents: number }[] = [];
    for (const [providerOrgId, cents] of [...share.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      const [org] = await tem.execute<{ credit_cents: string }[]>(
        'select credit_cents from orgs where id = ? for update',
        [providerOrgId],
      );
      const key = `dispute:${input.disputeId}:earnings`;
      const inserted = await tem.execute<{ id: string }[]>(
        `insert into ledger_entries (id, org_id, kind, amount_cents, balance_after_cents, idempotency_key, reference, memo)
         values (?, ?, 'chargeback', ?, ?, ?, ?, ?) on conflict do nothing returning id`,
        [
          newId('ledgerEntry'),
          providerOrgId,
          -cents,
          Number(org!.credit_cents) - cents,
          key,
          `payment:${payment.id}`,
          `Chargeback of payment ${payment.id}: earnings it paid for are reversed`,
        ],
      );
      if (inserted.length === 0) continue;
      await tem.execute(
        `update orgs set credit_cents = credit_cents - ?, balance_version = balance_version + 1, updated_at = now(),
                chargeback_carry_cents = greatest(chargeback_carry_cents, ? - credit_cents) where id = ?`,
        [cents, cents, providerOrgId],
        'run',
      );
      reversed.push({ providerOrgId, cents });
    }
    if (reversed.length > 0) this.deps.logger.warn({ dispute: input.disputeId, reversed }, 'earnings reversed');
    return reversed;
  }
}

/** The worker's loop: fold queued earnings every `intervalMs`. */
export function startEarningsFolder(
  earnings: EarningsService,
  logger: Logger,
  intervalMs = 1_000,
): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = earnings
      .foldAll()
      .catch((err: unknown) => logger.warn({ err }, 'earnings fold failed'))
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
