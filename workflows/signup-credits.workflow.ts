/**
 * Holds a human signup's trial credit until the email is verified, then grants it once through the ledger.
 * The grant activity is idempotent on the org's starter-credit key, so a retry or a second path cannot pay twice.
 * If verification never comes within `holdFor`, the hold lapses and nothing is granted.
 */
import { condition, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { CreditActivities } from '../activities/credits.activities.js';
import {
  emailVerifiedSignal,
  signupCreditsStatusQuery,
  type SignupCreditsInput,
  type SignupCreditsResult,
  type SignupCreditsState,
} from './signup-credits.messages.js';

const { grantStarterCredits, expireStarterCredits } = proxyActivities<CreditActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    // No maximumAttempts: retry until it lands (the grant is idempotent); only bad input stops it.
    nonRetryableErrorTypes: ['NotFoundError', 'ValidationError'],
  },
});

export async function signupCreditsWorkflow(input: SignupCreditsInput): Promise<SignupCreditsResult> {
  let verified = false;
  let state: SignupCreditsState = 'holding';
  setHandler(emailVerifiedSignal, () => {
    verified = true;
  });
  setHandler(signupCreditsStatusQuery, () => ({ state, amountCents: input.amountCents }));

  if (!(await condition(() => verified, input.holdFor))) {
    await expireStarterCredits({ orgId: input.orgId, amountCents: input.amountCents });
    state = 'expired';
    return { outcome: 'expired' };
  }

  state = 'granting';
  const grant = await grantStarterCredits({
    orgId: input.orgId,
    amountCents: input.amountCents,
    reference: `workflow:${workflowInfo().workflowId}`,
  });
  state = 'granted';
  return { outcome: 'granted', ledgerEntryId: grant.ledgerEntryId, balanceAfterCents: grant.balanceAfterCents };
}
