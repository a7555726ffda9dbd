/**
 * One charge of an org's unpaid card-on-file usage: charge the saved card off-session for what the org owes, with an
 * idempotency key tied to this run, which books the balance back up. A charge that is not final at once waits for the
 * payment webhook (up to a day). A failed charge suspends the org and mails its owner; the next successful payment
 * (a later charge, a checkout) lifts it.
 */
import { condition, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { BillingActivities, PaymentSettled } from '../activities/billing.activities.js';
import { paymentSettledSignal } from './auto-reload.messages.js';
import type { UsageChargeInput, UsageChargeResult } from './billing-cycle.messages.js';

const { chargeUsage, suspendForFailedPayment } = proxyActivities<BillingActivities>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '1 minute',
    maximumAttempts: 10,
    nonRetryableErrorTypes: ['NotFoundError'],
  },
});

export async function usageChargeWorkflow(input: UsageChargeInput): Promise<UsageChargeResult> {
  const settled = new Map<string, PaymentSettled>();
  setHandler(paymentSettledSignal, (s) => {
    settled.set(s.paymentId, s);
  });

  const { workflowId, runId } = workflowInfo();
  const attempt = await chargeUsage({ orgId: input.orgId, idempotencyKey: `${workflowId}:${runId}:charge` });
  if (attempt.status === 'skipped') return { outcome: 'skipped', reason: attempt.reason };
  if (attempt.status === 'succeeded') return { outcome: 'charged', paymentId: attempt.paymentId };

  let reason = attempt.status === 'failed' ? attempt.reason : 'no answer from the payment processor within a day';
  if (attempt.status === 'pending') {
    const answered = await condition(() => settled.has(attempt.paymentId), '1 day');
    const result = settled.get(attempt.paymentId);
    if (answered && result?.succeeded) return { outcome: 'charged', paymentId: attempt.paymentId };
    if (result?.reason) reason = result.reason;
  }
  await suspendForFailedPayment({ orgId: input.orgId, paymentId: attempt.paymentId, reason });
  return { outcome: 'failed', paymentId: attempt.paymentId, reason };
}
