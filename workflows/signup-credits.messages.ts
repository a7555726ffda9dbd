/** Signals, queries and ids of the signup-credits workflow (mirrors core/temporal/contracts.ts; a test checks). */
import { defineQuery, defineSignal } from '@temporalio/workflow';

export const emailVerifiedSignal = defineSignal('emailVerified');

export type SignupCreditsState = 'holding' | 'granting' | 'granted' | 'expired';
export interface SignupCreditsStatus {
  state: SignupCreditsState;
  amountCents: number;
}
export const signupCreditsStatusQuery = defineQuery<SignupCreditsStatus>('signupCreditsStatus');

export interface SignupCreditsInput {
  orgId: string;
  amountCents: number;
  /** Temporal duration string: how long the credit is held waiting for verification. */
  holdFor: string;
}

export type SignupCreditsResult =
  { outcome: 'granted'; ledgerEntryId: string; balanceAfterCents: number } | { outcome: 'expired' };

export const signupCreditsWorkflowId = (orgId: string): string => `signup-credits:${orgId}`;
