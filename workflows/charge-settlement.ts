/**
 * What autoReloadWorkflow and usageChargeWorkflow share after their charge activity: a charge that is not final at
 * once waits (up to a day) for the payment webhook's paymentSettled signal; a charge that fails suspends the org
 * (the activity also mails the owner). Deterministic: it only waits on signals and calls an activity.
 */
import { condition, setHandler, type ActivityOptions } from '@temporalio/workflow';
import type { ChargeAttempt, PaymentSettled } from '../activities/billing.activities.js';
import { paymentSettledSignal } from './auto-reload.messages.js';

/** The charge activities' options, the same for every workflow that charges a card (auto-reload, usage charge). */
export const CHARGE_ACTIVITY_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '1 minute',
    maximumAttempts: 10,
    nonRetryableErrorTypes: ['NotFoundError'],
  },
};

export type SettledCharge =
  | { outcome: 'skipped'; reason: string }
  | { outcome: 'succeeded'; paymentId: string }
  | { outcome: 'failed'; paymentId: string | null; reason: string };

/** Register the paymentSettled handler (call before the charge activity, so no signal is missed). */
export function collectSettlements(): Map<string, PaymentSettled> {
  const settled = new Map<string, PaymentSettled>();
  setHandler(paymentSettledSignal, (s) => {
    settled.set(s.paymentId, s);
  });
  return settled;
}

export async function settleCharge(
  orgId: string,
  attempt: ChargeAttempt,
  settled: Map<string, PaymentSettled>,
  suspendForFailedPayment: (input: { orgId: string; paymentId: string | null; reason: string }) => Promise<void>,
): Promise<SettledCharge> {
  if (attempt.status === 'skipped') return { outcome: 'skipped', reason: attempt.reason };
  if (attempt.status === 'succeeded') return { outcome: 'succeeded', paymentId: attempt.paymentId };

  let reason = attempt.status === 'failed' ? attempt.reason : 'no answer from the payment processor within a day';
  if (attempt.status === 'pending') {
    const answered = await condition(() => settled.has(attempt.paymentId), '1 day');
    const result = settled.get(attempt.paymentId);
    if (answered && result?.succeeded) return { outcome: 'succeeded', paymentId: attempt.paymentId };
    if (result?.reason) reason = result.reason;
  }
  await suspendForFailedPayment({ orgId, paymentId: attempt.paymentId, reason });
  return { outcome: 'failed', paymentId: attempt.paymentId, reason };
}
