/**
 * The steps of `EarningsService.reverseDisputed` (a chargeback reverses the providers' net share of the calls the
 * disputed money paid for): which calls it paid for, each provider's share of them (calls booked alone, calls booked
 * in usage batches), and the `chargeback` ledger row that takes a provider's share back.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../ids.js';

/** A chargeback on `payment` that took `reclaimedCents` of its credit back from the consumer. */
export interface DisputeReversal {
  disputeId: string;
  payment: { id: string; orgId: string; kind: string; creditCents: number; createdAt: Date };
  reclaimedCents: number;
}

/** A call the disputed money paid for: `portion` of its `cost` (all of it but for the last one). */
interface PaidCall {
  id: string;
  batchId: string | null;
  portion: number;
  cost: number;
}

type CallRow = { id: string; cost_cents: string; batch_id: string | null };
type ShareRow = { provider_org_id: string; gross: string; fee: string };

const USAGE_CHARGE_CALLS_SQL = `select u.id, u.cost_cents, u.batch_id from usage_events u
          where u.org_id = ? and u.billable_cents > 0 and u.cost_cents > 0 and u.created_at <= ?
            and u.created_at > coalesce((select max(p.created_at) from payments p where p.org_id = ? and p.kind = 'usage_charge'
                                          and p.status = 'succeeded' and p.created_at < ?), '-infinity')
          order by u.created_at desc, u.id desc`;

const CREDIT_PURCHASE_CALLS_SQL = `select u.id, u.cost_cents, u.batch_id from usage_events u
          where u.org_id = ? and u.cost_cents > 0 and u.billable_cents = 0 and u.created_at >= ?
          order by u.created_at desc, u.id desc limit 10000`;

/**
 * Each provider's gross earning and fee booked in the ledger under `count` references `${prefix}{id}` (placeholders):
 * rows (id, provider org, gross, fee), as the queued accruals give them.
 */
const bookedSharesSql = (prefix: string, count: number) =>
  `select substr(l.reference, ${prefix.length + 1}), l.org_id,
                sum(case when l.kind = 'provider_earning' then l.amount_cents else 0 end),
                -sum(case when l.kind = 'platform_fee' then l.amount_cents else 0 end)
           from ledger_entries l
          where l.kind in ('provider_earning', 'platform_fee') and l.reference in (${Array(count).fill('?').join(',')})
          group by l.reference, l.org_id`;

/**
 * The calls the disputed money paid for, latest first: a usage charge's card-billed calls, or the calls made with the
 * part of a credit purchase that was already spent.
 */
export async function callsPaidFor(tem: EntityManager, input: DisputeReversal): Promise<PaidCall[]> {
  const { payment } = input;
  let calls: CallRow[];
  let budget: number;
  if (payment.kind === 'usage_charge') {
    calls = await tem.execute(USAGE_CHARGE_CALLS_SQL, [
      payment.orgId,
      payment.createdAt,
      payment.orgId,
      payment.createdAt,
    ]);
    budget = payment.creditCents;
  } else {
    budget = payment.creditCents - input.reclaimedCents;
    if (budget <= 0) return [];
    calls = await tem.execute(CREDIT_PURCHASE_CALLS_SQL, [payment.orgId, payment.createdAt]);
  }
  const paidFor: PaidCall[] = [];
  for (const c of calls) {
    if (budget <= 0) break;
    const cost = Number(c.cost_cents);
    const portion = Math.min(cost, budget);
    budget -= portion;
    paidFor.push({ id: c.id, batchId: c.batch_id, portion, cost });
  }
  return paidFor;
}

function addShare(share: Map<string, number>, providerOrgId: string, cents: number): void {
  if (cents > 0) share.set(providerOrgId, (share.get(providerOrgId) ?? 0) + cents);
}

/** Calls booked alone (before usage batches): the net share from their own earning rows. */
export async function addUnbatchedShares(
  tem: EntityManager,
  paidFor: readonly PaidCall[],
  share: Map<string, number>,
): Promise<void> {
  const alone = paidFor.filter((p) => p.batchId === null);
  if (alone.length === 0) return;
  const rows = await tem.execute<(ShareRow & { usage_id: string })[]>(
    `select usage_id, provider_org_id, gross_cents as gross, fee_cents as fee from earning_accruals
          where batch_id is null and usage_id in (${alone.map(() => '?').join(',')})
         union all ${bookedSharesSql('usage:', alone.length)}`,
    [...alone.map((p) => p.id), ...alone.map((p) => `usage:${p.id}`)],
  );
  const byCall = new Map(rows.map((r) => [r.usage_id, r]));
  for (const p of alone) {
    const r = byCall.get(p.id);
    if (!r) continue;
    addShare(share, r.provider_org_id, Math.floor(((Number(r.gross) - Number(r.fee)) * p.portion) / p.cost));
  }
}

/**
 * Calls booked in usage batches: each provider's net earning from a batch, in the part of the batch's charge the
 * disputed money paid for (all of it when it paid for every call of the batch).
 */
export async function addBatchedShares(
  tem: EntityManager,
  paidFor: readonly PaidCall[],
  share: Map<string, number>,
): Promise<void> {
  const portionOf = new Map<string, number>();
  for (const p of paidFor)
    if (p.batchId !== null) portionOf.set(p.batchId, (portionOf.get(p.batchId) ?? 0) + p.portion);
  if (portionOf.size === 0) return;
  const ids = [...portionOf.keys()];
  const rows = await tem.execute<(ShareRow & { batch_id: string })[]>(
    `select batch_id, provider_org_id, sum(gross_cents) as gross, sum(fee_cents) as fee from earning_accruals
          where batch_id in (${ids.map(() => '?').join(',')}) group by batch_id, provider_org_id
         union all ${bookedSharesSql('usage_batch:', ids.length)}`,
    [...ids, ...ids.map((id) => `usage_batch:${id}`)],
  );
  const gross = new Map<string, number>();
  for (const r of rows) gross.set(r.batch_id, (gross.get(r.batch_id) ?? 0) + Number(r.gross));
  for (const r of rows) {
    const total = gross.get(r.batch_id)!;
    const portion = Math.min(portionOf.get(r.batch_id)!, total);
    addShare(share, r.provider_org_id, Math.floor(((Number(r.gross) - Number(r.fee)) * portion) / total));
  }
}

/**
 * Takes `cents` back from a provider: a `chargeback` ledger row keyed `dispute:{id}:earnings` and its balance.
 * False when the row was already posted (a retried reversal).
 */
export async function postEarningsChargeback(
  tem: EntityManager,
  input: DisputeReversal,
  providerOrgId: string,
  cents: number,
): Promise<boolean> {
  const { payment } = input;
  const [org] = await tem.execute<{ credit_cents: string }[]>('select credit_cents from orgs where id = ? for update', [
    providerOrgId,
  ]);
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
  if (inserted.length === 0) return false;
  await tem.execute(
    `update orgs set credit_cents = credit_cents - ?, balance_version = balance_version + 1, updated_at = now(),
                chargeback_carry_cents = greatest(chargeback_carry_cents, ? - credit_cents) where id = ?`,
    [cents, cents, providerOrgId],
    'run',
  );
  return true;
}
