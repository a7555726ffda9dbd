/** Ids of the billing workflows (types defined once, in core/temporal/contracts.ts). */
export type {
  BillingCycleInput,
  BillingCycleResult,
  UsageChargeInput,
  UsageChargeResult,
} from '../activities/billing.activities.js';

export const usageChargeWorkflowId = (orgId: string): string => `usage-charge:${orgId}`;
