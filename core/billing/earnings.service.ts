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
import {
  addBatchedShares,
  addUnbatchedShares,
  callsPaidFor,
  postEarningsChargeback,
  type DisputeReversal,
} from './earnings-reversal.js';

const FOLD_BATCH = 1_000;

/**
 * Net earnings of the provider (`?`) booked against rows of `source` (referenced as `${prefix}{id}`) that billed the
 * card and have no succeeded usage charge at or after `at`.
 */
const uncollectedSql = (source: 'usage_batches' | 'usage_events', prefix: string, at: 'last_at' | 'created_at') =>
  `select coalesce(sum(l.amount_cents), 0) as cents
     from ledger_entries l join ${source} s on s.id = substr(l.reference, ${prefix.length + 1})
    where l.org_id = ? and l.kind in ('provider_earning', 'platform_fee') and l.reference like '${prefix}%'
      and s.billable_cents > 0
      and not exists (select 1 from payments p where p.org_id = s.org_id and p.kind = 'usage_charge'
                       and p.status = 'succeeded' and p.created_at >= s.${at})`;

/**
 * `EarningsService.uncollectedNet` as a function of the books alone (provider analytics reads it too, and skips the
 * per-call part, `legacy: false`, for a provider with no earnings booked per call).
 */
export async function uncollectedNetOf(
  em: EntityManager,
  providerOrgId: string,
  { legacy = true }: { legacy?: boolean } = {},
): Promise<number> {
  const [row] = await em.execute<{ cents: string }[]>(uncollectedSql('usage_batches', 'usage_batch:', 'last_at'), [
    providerOrgId,
  ]);
  if (!legacy) return Number(row?.cents ?? 0);
  const [calls] = await em.execute<{ cents: string }[]>(uncollectedSql('usage_events', 'usage:', 'created_at'), [
    providerOrgId,
  ]);
  return Number(row?.cents ?? 0) + Number(calls?.cents ?? 0);
}

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
  uncollectedNet(em: EntityManager, providerOrgId: string): Promise<number> {
    return uncollectedNetOf(em, providerOrgId);
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
    input: DisputeReversal,
  ): Promise<{ providerOrgId: string; cents: number }[]> {
    const paidFor = await callsPaidFor(tem, input);
    if (paidFor.length === 0) return [];
    const share = new Map<string, number>();
    await addUnbatchedShares(tem, paidFor, share);
    await addBatchedShares(tem, paidFor, share);
    const reversed: { providerOrgId: string; cents: number }[] = [];
    for (const [providerOrgId, cents] of [...share.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      if (await postEarningsChargeback(tem, input, providerOrgId, cents)) reversed.push({ providerOrgId, cents });
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
