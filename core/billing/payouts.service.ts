/**
 * Provider payouts: at each period close, a provider org whose Stripe Connect account is enabled is paid what it has
 * earned and not yet been paid (earnings less platform fees less earlier payouts), capped by its balance (an org that
 * also buys API calls may have spent some of its earnings). The payout row and its negative `payout` ledger entry are
 * written in one transaction before Stripe is called, so the amount is fixed once; the transfer then carries the
 * idempotency key `payout:{orgId}:{period}`, so a retried activity never moves money twice. A transfer Stripe refuses
 * is marked failed and its ledger entry reversed (a positive `payout` row), so the money is paid in a later period.
 */
import { LockMode, type EntityManager, type MikroORM } from '@mikro-orm/postgresql';
import type Stripe from 'stripe';
import { Org, Payout, type IPayout } from '../../db/entities/index.js';
import type { Config } from '../config.js';
import type { GatewayEvents } from '../spend/gateway-events.js';
import { newId } from '../ids.js';
import type { LedgerService } from './ledger.service.js';
import type { Logger } from '../logger.js';
import type { EarningsService } from './earnings.service.js';
import { requireStripe } from './stripe.js';

export type PayoutResult =
  | { status: 'skipped'; reason: string }
  | { status: 'paid'; payoutId: string; amountCents: number; transferId: string }
  | { status: 'failed'; payoutId: string; amountCents: number; reason: string };

export const payoutKey = (orgId: string, period: string) => `payout:${orgId}:${period}`;

export class PayoutsService {
  constructor(
    private readonly deps: {
      orm: MikroORM;
      config: Config;
      stripe: Stripe | undefined;
      ledger: LedgerService;
      events: GatewayEvents;
      logger: Logger;
      earnings: EarningsService;
    },
  ) {}

  /** Provider orgs that may be owed a payout: Connect enabled and some earnings on their books. */
  async payableOrgIds(): Promise<string[]> {
    await this.deps.earnings.foldAll();
    const rows = await this.deps.orm.em.fork().execute<{ id: string }[]>(
      `select o.id from orgs o
        where o.connect_status = 'enabled' and o.stripe_account_id is not null
          and exists (select 1 from ledger_entries l where l.org_id = o.id and l.kind = 'provider_earning')
        order by o.id`,
    );
    return rows.map((r) => r.id);
  }

  /**
   * Payable net earnings of an org: earnings, less fees, less payouts (reversed payouts count back), less chargebacks
   * of earnings, less what consumers have not paid yet (card-billed calls whose usage charge has not succeeded).
   */
  async unpaidEarnings(orgId: string, em: EntityManager = this.deps.orm.em.fork()): Promise<number> {
    const [row] = await em.execute<{ net: string }[]>(
      `select coalesce(sum(amount_cents), 0) as net from ledger_entries
        where org_id = ? and (kind in ('provider_earning', 'platform_fee', 'payout')
                              or (kind = 'chargeback' and idempotency_key like 'dispute:%:earnings'))`,
      [orgId],
    );
    return Number(row?.net ?? 0) - (await this.deps.earnings.uncollectedNet(em, orgId));
  }

  async payOut(input: { orgId: string; period: string }): Promise<PayoutResult> {
    const key = payoutKey(input.orgId, input.period);
    await this.deps.earnings.foldAll();
    const em = this.deps.orm.em.fork();
    let payout = await em.findOne(Payout, { idempotencyKey: key });
    if (!payout) {
      const created = await this.createPayout(em, input, key);
      if (created) return { status: 'skipped', reason: created };
      // The balance dropped: the gateways re-read it now rather than at their next refresh.
      await this.deps.events.orgChanged(input.orgId);
      payout = await em.findOneOrFail(Payout, { idempotencyKey: key });
    }
    if (payout.status === 'paid') {
      return {
        status: 'paid',
        payoutId: payout.id,
        amountCents: payout.amountCents,
        transferId: payout.stripeTransferId!,
      };
    }
    if (payout.status === 'failed') {
      return {
        status: 'failed',
        payoutId: payout.id,
        amountCents: payout.amountCents,
        reason: payout.failureReason ?? 'transfer failed',
      };
    }
    const stripe = requireStripe(this.deps.stripe);
    let transfer: Stripe.Transfer;
    try {
      transfer = await stripe.transfers.create(
        {
          amount: payout.amountCents,
          currency: 'usd',
          destination: payout.destination,
          transfer_group: key,
          metadata: { payout_id: payout.id, org_id: input.orgId, period: input.period },
        },
        { idempotencyKey: key },
      );
    } catch (err) {
      const type = (err as { type?: string }).type;
      if (type !== 'StripeInvalidRequestError' && type !== 'StripePermissionError') throw err; // transient: retry
      const reason = (err as Error).message.slice(0, 500);
      await this.reverseFailedPayout(em, input, payout, reason);
      await this.deps.events.orgChanged(input.orgId);
      this.deps.logger.warn({ payout_id: payout.id, org_id: input.orgId, reason }, 'payout failed');
      return { status: 'failed', payoutId: payout.id, amountCents: payout.amountCents, reason };
    }
    await em.nativeUpdate(Payout, { id: payout.id }, { status: 'paid', stripeTransferId: transfer.id });
    return { status: 'paid', payoutId: payout.id, amountCents: payout.amountCents, transferId: transfer.id };
  }

  /** The payout row and its `payout` ledger debit, in one transaction; a reason when nothing is payable. */
  private async createPayout(
    em: EntityManager,
    input: { orgId: string; period: string },
    key: string,
  ): Promise<string | null> {
    return em.transactional(async (tem) => {
      const org = await tem.findOneOrFail(Org, input.orgId, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (org.connectStatus !== 'enabled' || !org.stripeAccountId) return 'Connect payouts are not enabled';
      if (await tem.findOne(Payout, { idempotencyKey: key })) return null; // raced with another run
      const unpaid = await this.unpaidEarnings(org.id, tem);
      const amount = Math.min(unpaid, org.creditCents);
      if (amount < this.deps.config.billing.payoutMinimumCents) {
        return `${Math.max(amount, 0)} cents payable is under the payout minimum`;
      }
      const row = tem.create(Payout, {
        id: newId('payout'),
        org,
        period: input.period,
        amountCents: amount,
        destination: org.stripeAccountId,
        idempotencyKey: key,
      });
      await tem.flush();
      await this.deps.ledger.post(
        {
          orgId: org.id,
          kind: 'payout',
          amountCents: -amount,
          idempotencyKey: key,
          reference: `payout:${row.id}`,
          memo: `Payout for ${input.period}`,
        },
        tem,
      );
      return null;
    });
  }

  /** Stripe refused the transfer: the payout is failed and its ledger debit reversed, in one transaction. */
  private async reverseFailedPayout(
    em: EntityManager,
    input: { orgId: string; period: string },
    payout: IPayout,
    reason: string,
  ): Promise<void> {
    const key = payoutKey(input.orgId, input.period);
    await em.transactional(async (tem) => {
      await this.deps.ledger.post(
        {
          orgId: input.orgId,
          kind: 'payout',
          amountCents: payout.amountCents,
          idempotencyKey: `${key}:reversal`,
          reference: `payout:${payout.id}`,
          memo: `Payout for ${input.period} failed; returned to the balance`,
        },
        tem,
      );
      await tem.nativeUpdate(Payout, { id: payout.id }, { status: 'failed', failureReason: reason });
    });
  }
}
