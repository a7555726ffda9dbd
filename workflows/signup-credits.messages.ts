/** Signals, queries, payload types and ids of the signup-credits workflow (types defined in core/temporal/contracts.ts). */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { SignupCreditsStatus } from '../activities/credits.activities.js';

export type { SignupCreditsInput, SignupCreditsResult, SignupCreditsStatus } from '../activities/credits.activities.js';
export type SignupCreditsState = SignupCreditsStatus['state'];

export const emailVerifiedSignal = defineSignal('emailVerified');
export const signupCreditsStatusQuery = defineQuery<SignupCreditsStatus>('signupCreditsStatus');

export const signupCreditsWorkflowId = (orgId: string): string => `signup-credits:${orgId}`;
