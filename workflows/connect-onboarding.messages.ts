/** Signals, types and ids of connectOnboardingWorkflow (mirrors core/temporal/contracts.ts). */
import { defineSignal } from '@temporalio/workflow';

export interface AccountUpdate {
  charges_enabled: boolean;
  payouts_enabled: boolean;
  details_submitted: boolean;
}

export const accountUpdatedSignal = defineSignal<[AccountUpdate]>('accountUpdated');

export interface ConnectOnboardingInput {
  orgId: string;
  accountId: string;
}

export interface ConnectOnboardingResult {
  status: 'enabled';
}

export const connectWorkflowId = (orgId: string): string => `connect:${orgId}`;
