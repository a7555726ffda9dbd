/**
 * One auto-reload of an org whose balance fell under its threshold (started by signal-with-start, so requests that
 * arrive while it runs are folded into this run): charge the saved card off-session with an idempotency key tied to
 * this run, then credit. A charge that is not final at once waits for the payment webhook (up to a day). A failed
 * charge suspends the org and mails its owner.
 */
import { proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { BillingActivities } from '../activities/billing.activities.js';
import { reloadRequestedSignal, type AutoReloadInput, type AutoReloadResult } from './auto-reload.messages.js';
import { CHARGE_ACTIVITY_OPTIONS, collectSettlements, settleCharge } from './charge-settlement.js';

const { chargeForReload, suspendForFailedPayment } = proxyActivities<BillingActivities>(CHARGE_ACTIVITY_OPTIONS);

export async function autoReloadWorkflow(input: AutoReloadInput): Promise<AutoReloadResult> {
  const settled = collectSettlements();
  setHandler(reloadRequestedSignal, () => undefined); // folded into this run

  const { workflowId, runId } = workflowInfo();
  const attempt = await chargeForReload({ orgId: input.orgId, idempotencyKey: `${workflowId}:${runId}:charge` });
  const result = await settleCharge(input.orgId, attempt, settled, suspendForFailedPayment);
  return result.outcome === 'succeeded' ? { outcome: 'credited', paymentId: result.paymentId } : result;
}
