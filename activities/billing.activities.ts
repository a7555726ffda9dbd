/** Billing activities: off-session charges (idempotent by key), suspension after a failed payment, billing cycles. */
import type { BillingCycleService } from '../core/billing/billing-cycle.service.js';
import type { ChargesService } from '../core/billing/charges.service.js';
import type { PayoutResult, PayoutsService } from '../core/billing/payouts.service.js';
import type { ReconciliationReport, ReconciliationService } from '../core/billing/reconciliation.service.js';
import type { BillingCycleInput, BillingCyclePlan, ChargeAttempt } from '../core/temporal/contracts.js';

// Workflow payload types, for workflows/ (which may import types from activities/ only).
export type {
  AutoReloadInput,
  AutoReloadResult,
  BillingCycleInput,
  BillingCyclePlan,
  BillingCycleResult,
  ChargeAttempt,
  PaymentSettled,
  UsageChargeInput,
  UsageChargeResult,
} from '../core/temporal/contracts.js';
export type { ReconciliationReport } from '../core/billing/reconciliation.service.js';
export type { PayoutResult } from '../core/billing/payouts.service.js';

export function createBillingActivities(deps: {
  charges: ChargesService;
  reconciliation: ReconciliationService;
  billingCycle: BillingCycleService;
  payouts: PayoutsService;
}) {
  return {
    async reconcileBooks(): Promise<ReconciliationReport> {
      return deps.reconciliation.run();
    },
    async chargeForReload(input: { orgId: string; idempotencyKey: string }): Promise<ChargeAttempt> {
      return deps.charges.chargeForReload(input);
    },
    async chargeUsage(input: { orgId: string; idempotencyKey: string }): Promise<ChargeAttempt> {
      return deps.charges.chargeUsage(input);
    },
    async suspendForFailedPayment(input: { orgId: string; paymentId: string | null; reason: string }): Promise<void> {
      await deps.charges.suspendForFailedPayment(input);
    },
    async planBillingCycle(input: BillingCycleInput): Promise<BillingCyclePlan> {
      return deps.billingCycle.plan(input);
    },
    async payOut(input: { orgId: string; period: string }): Promise<PayoutResult> {
      return deps.payouts.payOut(input);
    },
  };
}

export type BillingActivities = ReturnType<typeof createBillingActivities>;
