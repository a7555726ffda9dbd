/** Signals, payload types and ids of autoReloadWorkflow (types defined once, in core/temporal/contracts.ts). */
import { defineSignal } from '@temporalio/workflow';
import type { PaymentSettled } from '../activities/billing.activities.js';

export type {
  AutoReloadInput,
  AutoReloadResult,
  ChargeAttempt,
  PaymentSettled,
} from '../activities/billing.activities.js';

export const reloadRequestedSignal = defineSignal('reloadRequested');
export const paymentSettledSignal = defineSignal<[PaymentSettled]>('paymentSettled');

export const autoReloadWorkflowId = (orgId: string): string => `reload:${orgId}`;
