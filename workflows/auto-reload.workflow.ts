/**
 * One auto-reload of an org whose balance fell under its threshold (started by signal-with-start, so requests that
 * arrive while it runs are folded into this run): charge the saved card off-session with an idempotency key tied to
 * this run, then credit. A charge that is not final at once waits for the payment webhook (up to a day). A failed
 * charge suspends the org and mails its owner.
 */
import { condition, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { BillingActivities } from '../activities/billing.activities.js';
import {
  paymentSettledSignal,
  reloadRequestedSignal,
  type AutoReloadInput,
  type AutoReloadResult,
  type PaymentSettled,
} from './auto-reload.messages.js';

const { chargeForReload, suspendForFailedPayment } = proxyActivities<BillingActivities>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '1 minute',
    maximumAttempts: 10,
    nonRetryableErrorTypes: ['NotFoundError'],
  },
});

export async function autoReloadWorkflow(input: AutoReloadInput): Promise<AutoReloadResult> {
  const settled = new Map<string, PaymentSettled>();
  setHandler(reloadRequestedSignal, () => undefined); // folded into this run
  setHandler(paymentSettledSignal, (s) => {
    settled.set(s.paymentId, s);
  });

  const { workflowId, runId } = workflowInfo();
  const attempt = await chargeForReload({ orgId: input.orgId, idempotencyKey: `${workflowId}:${runId}:charge` });
  if (attempt.status === 'skipped') return { outcome: 'skipped', reason: attempt.reason };
  if (attempt.status === 'succeeded') return { outcome: 'credited', paymentId: attempt.paymentId };

  let reason = attempt.status === 'failed' ? attempt.reason : 'no answer from the payment processor within a day';
  if (attempt.status === 'pending') {
    const answered = await condition(() => settled.has(attempt.paymentId), '1 day');
    const result = settled.get(attempt.paymentId);
    if (answered && result?.succeeded) return { outcome: 'credited', paymentId: attempt.paymentId };
    if (result?.reason) reason = result.reason;
  }
  await suspendForFailedPayment({ orgId: input.orgId, paymentId: attempt.paymentId, reason });
  return { outcome: 'failed', paymentId: attempt.paymentId, reason };
}
