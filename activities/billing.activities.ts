/** Billing activities: off-session charges (idempotent by key) and suspension after a failed payment. */
import type { ChargesService } from '../core/billing/charges.service.js';
import type { ReconciliationReport, ReconciliationService } from '../core/billing/reconciliation.service.js';
import type { ChargeAttempt } from '../core/temporal/contracts.js';

// Workflow payload types, for workflows/ (which may import types from activities/ only).
export type { AutoReloadInput, AutoReloadResult, ChargeAttempt, PaymentSettled } from '../core/temporal/contracts.js';
export type { ReconciliationReport } from '../core/billing/reconciliation.service.js';

export function createBillingActivities(deps: { charges: ChargesService; reconciliation: ReconciliationService }) {
  return {
    async reconcileBooks(): Promise<ReconciliationReport> {
      return deps.reconciliation.run();
    },
    async chargeForReload(input: { orgId: string; idempotencyKey: string }): Promise<ChargeAttempt> {
      return deps.charges.chargeForReload(input);
    },
    async suspendForFailedPayment(input: { orgId: string; paymentId: string | null; reason: string }): Promise<void> {
      await deps.charges.suspendForFailedPayment(input);
    },
  };
}

export type BillingActivities = ReturnType<typeof createBillingActivities>;
