/**
 * A provider's money to date, read from its books (issue 31, section 5: one consistent story). On the provider's
 * ledger a paid call is a `provider_earning` row (the gross price) and a negative `platform_fee` row, folded per usage
 * batch within seconds of the calls (core/billing/earnings.service.ts); both change the org's balance, so the net
 * is credited to the balance as it is booked. A payout is a negative `payout` row (a failed transfer's reversal a
 * positive one); a lost dispute takes back the net share of the calls it paid for (`chargeback` rows keyed
 * `dispute:…:earnings`). Earnings from calls billed to a consumer's card are not payable until that payment is
 * collected (`uncollectedNetOf`). So, all time:
 *
 *   gross = platform fee + net, and net = paid out + reversed + pending + available,
 *
 * where `available` is what PayoutsService.unpaidEarnings pays (a payout sends at most the balance, which also pays
 * for the org's own calls).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { uncollectedNetOf } from '../billing/earnings.service.js';
import type { EarningsToDateView } from './providers.schemas.js';

const usd = (cents: number) => `$${(cents / 100).toFixed(2)}`;

/** Where the net goes, for the org's payout status, in words (the console, the REST view and the agent tool). */
export function whereEarningsGo(payouts: EarningsToDateView['payouts'], payoutMinimumCents: number): string {
  const credited =
    'Net earnings (the price less the marketplace fee) are credited to your organization’s balance as paid calls ' +
    'are booked, within seconds; the balance also pays for your own calls. Earnings from calls billed to a ' +
    'consumer’s card are pending until that payment is collected.';
  const rule = `at each month’s end (UTC), up to the balance, when it is at least ${usd(payoutMinimumCents)}`;
  if (payouts === 'enabled') return `${credited} What is available is paid out through Stripe Connect ${rule}.`;
  const why = payouts === 'pending' ? 'Stripe Connect onboarding is not finished' : 'payouts are not set up';
  return `${credited} Until then they stay in the balance: ${why}. Once it is done, what is available is paid out ${rule}.`;
}

/** The provider's earnings, fees, payouts, reversals, pending and available cents, all time. */
export async function earningsToDate(
  em: EntityManager,
  orgId: string,
  payoutMinimumCents: number,
): Promise<EarningsToDateView> {
  const [books] = await em.execute<
    {
      gross: string;
      fees: string;
      paid: string;
      reversed: string;
      per_call: string;
      balance: string;
      connect: string;
    }[]
  >(
    `select coalesce(sum(l.amount_cents) filter (where l.kind = 'provider_earning'), 0) as gross,
            coalesce(sum(-l.amount_cents) filter (where l.kind = 'platform_fee'), 0) as fees,
            coalesce(sum(-l.amount_cents) filter (where l.kind = 'payout'), 0) as paid,
            coalesce(sum(-l.amount_cents) filter (where l.kind = 'chargeback'
                                                   and l.idempotency_key like 'dispute:%:earnings'), 0) as reversed,
            count(*) filter (where l.kind in ('provider_earning', 'platform_fee')
                               and l.reference like 'usage:%') as per_call,
            o.credit_cents as balance, o.connect_status as connect
       from orgs o left join ledger_entries l on l.org_id = o.id
      where o.id = ? group by o.id`,
    [orgId],
  );
  const gross = Number(books?.gross ?? 0);
  const fees = Number(books?.fees ?? 0);
  const paid = Number(books?.paid ?? 0);
  const reversed = Number(books?.reversed ?? 0);
  // Earnings booked per call (before usage batches) are matched to their calls only when there are any.
  const pending = await uncollectedNetOf(em, orgId, { legacy: Number(books?.per_call ?? 0) > 0 });
  const payouts = (books?.connect ?? 'none') as EarningsToDateView['payouts'];
  return {
    gross_cents: gross,
    platform_fee_cents: fees,
    net_cents: gross - fees,
    paid_out_cents: paid,
    reversed_cents: reversed,
    pending_cents: pending,
    available_cents: gross - fees - paid - reversed - pending,
    balance_cents: Number(books?.balance ?? 0),
    payouts,
    where_earnings_go: whereEarningsGo(payouts, payoutMinimumCents),
  };
}
