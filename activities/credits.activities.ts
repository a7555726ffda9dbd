/** Credit activities: thin adapters from workflow steps to core services. Idempotent by construction. */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { GatewayEvents } from '../core/spend/gateway-events.js';
import type { LedgerService } from '../core/billing/ledger.service.js';
import { STARTER_CREDIT_IDEMPOTENCY_KEY } from '../core/temporal/contracts.js';

// Workflow payload types, for workflows/ (which may import types from activities/ only).
export type { SignupCreditsInput, SignupCreditsResult, SignupCreditsStatus } from '../core/temporal/contracts.js';

export interface GrantStarterCreditsInput {
  orgId: string;
  amountCents: number;
  reference: string;
}

export interface GrantStarterCreditsResult {
  ledgerEntryId: string;
  balanceAfterCents: number;
  alreadyGranted: boolean;
}

export function createCreditActivities(deps: { ledger: LedgerService; orm: MikroORM; events: GatewayEvents }) {
  return {
    /**
     * Grant the starter credit once per org: the ledger's idempotency key makes a retry return the first row, and the
     * withheld amount moves to the spendable balance in the same transaction.
     */
    async grantStarterCredits(input: GrantStarterCreditsInput): Promise<GrantStarterCreditsResult> {
      const granted = await deps.orm.em.fork().transactional(async (tem) => {
        const entry = await deps.ledger.post(
          {
            orgId: input.orgId,
            kind: 'grant',
            amountCents: input.amountCents,
            idempotencyKey: STARTER_CREDIT_IDEMPOTENCY_KEY,
            reference: input.reference,
            memo: 'Starter credit (email verified)',
          },
          tem,
        );
        if (!entry.replayed) {
          await tem.execute(
            'update orgs set withheld_credit_cents = greatest(withheld_credit_cents - ?, 0) where id = ?',
            [input.amountCents, input.orgId],
            'run',
          );
        }
        return { ledgerEntryId: entry.id, balanceAfterCents: entry.balanceAfterCents, alreadyGranted: entry.replayed };
      });
      // The gateways may hold the org's empty balance: they re-read it on the next call.
      if (!granted.alreadyGranted) await deps.events.orgChanged(input.orgId);
      return granted;
    },

    /** The hold lapsed: the withheld trial credit is no longer shown as pending. */
    async expireStarterCredits(input: { orgId: string; amountCents: number }): Promise<void> {
      await deps.orm.em
        .fork()
        .execute(
          'update orgs set withheld_credit_cents = greatest(withheld_credit_cents - ?, 0) where id = ?',
          [input.amountCents, input.orgId],
          'run',
        );
    },
  };
}

export type CreditActivities = ReturnType<typeof createCreditActivities>;
