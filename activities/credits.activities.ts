/** Credit activities: thin adapters from workflow steps to core services. Idempotent by construction. */
import type { LedgerService } from '../core/ledger/ledger.service.js';
import { STARTER_CREDIT_IDEMPOTENCY_KEY } from '../core/temporal/contracts.js';

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

export function createCreditActivities(deps: { ledger: LedgerService }) {
  return {
    /** Grant the starter credit once per org: the ledger's idempotency key makes a retry return the first row. */
    async grantStarterCredits(input: GrantStarterCreditsInput): Promise<GrantStarterCreditsResult> {
      const entry = await deps.ledger.post({
        orgId: input.orgId,
        kind: 'grant',
        amountCents: input.amountCents,
        idempotencyKey: STARTER_CREDIT_IDEMPOTENCY_KEY,
        reference: input.reference,
        memo: 'Starter credit (email verified)',
      });
      return { ledgerEntryId: entry.id, balanceAfterCents: entry.balanceAfterCents, alreadyGranted: entry.replayed };
    },
  };
}

export type CreditActivities = ReturnType<typeof createCreditActivities>;
