/**
 * One charge of an org's unpaid card-on-file usage: charge the saved card off-session for what the org owes, with an
 * idempotency key tied to this run, which books the balance back up. A charge that is not final at once waits for the
 * payment webhook (up to a day). A failed charge suspends the org and mails its owner; the next successful payment
 * (a later charge, a checkout) lifts it.
 */
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { BillingActivities } from '../activities/billing.activities.js';
import { CHARGE_ACTIVITY_OPTIONS, collectSettlements, settleCharge } from './charge-settlement.js';
import type { UsageChargeInput, UsageChargeResult } from './billing-cycle.messages.js';

const { chargeUsage, suspendForFailedPayment } = proxyActivities<BillingActivities>(CHARGE_ACTIVITY_OPTIONS);

export async function usageChargeWorkflow(input: UsageChargeInput): Promise<UsageChargeResult> {
  const settled = collectSettlements();
  const { workflowId, runId } = workflowInfo();
  const attempt = await chargeUsage({ orgId: input.orgId, idempotencyKey: `${workflowId}:${runId}:charge` });
  const result = await settleCharge(input.orgId, attempt, settled, suspendForFailedPayment);
  return result.outcome === 'succeeded' ? { outcome: 'charged', paymentId: result.paymentId } : result;
}
