/** Signals, payload types and ids of connectOnboardingWorkflow (types defined once, in core/temporal/contracts.ts). */
import { defineSignal } from '@temporalio/workflow';
import type { AccountUpdate } from '../activities/providers.activities.js';

export type {
  AccountUpdate,
  ConnectOnboardingInput,
  ConnectOnboardingResult,
} from '../activities/providers.activities.js';

export const accountUpdatedSignal = defineSignal<[AccountUpdate]>('accountUpdated');

export const connectWorkflowId = (orgId: string): string => `connect:${orgId}`;
