/**
 * Card-on-file billing and provider payouts, run by two Temporal Schedules: hourly (`threshold`: charge orgs whose
 * unpaid usage passed the threshold) and on the 1st of each month (`period_end`: charge every balance owed, then pay
 * providers for the closed month). Each org's charge is its own workflow, `usage-charge:{orgId}`, so one org's slow or
 * failing card never holds up the others and two cycles can never charge the same debt at once (the second start
 * finds the first running). Payouts are one idempotent activity per provider, keyed by org and period.
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ParentClosePolicy, proxyActivities, startChild } from '@temporalio/workflow';
import type { BillingActivities } from '../activities/billing.activities.js';
import { usageChargeWorkflowId, type BillingCycleInput, type BillingCycleResult } from './billing-cycle.messages.js';
import { usageChargeWorkflow } from './usage-charge.workflow.js';

const { planBillingCycle, payOut } = proxyActivities<BillingActivities>({
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '5 seconds',
    maximumInterval: '5 minutes',
    maximumAttempts: 20,
    nonRetryableErrorTypes: ['NotFoundError', 'ValidationError'],
  },
});

export async function billingCycleWorkflow(input: BillingCycleInput): Promise<BillingCycleResult> {
  const plan = await planBillingCycle(input);
  const result: BillingCycleResult = {
    period: plan.period,
    usageChargesStarted: [],
    usageChargesAlreadyRunning: [],
    payouts: [],
  };
  for (const orgId of plan.usageChargeOrgIds) {
    try {
      await startChild(usageChargeWorkflow, {
        workflowId: usageChargeWorkflowId(orgId),
        args: [{ orgId }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
      result.usageChargesStarted.push(orgId);
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      result.usageChargesAlreadyRunning.push(orgId);
    }
  }
  for (const orgId of plan.payoutOrgIds) {
    const payout = await payOut({ orgId, period: plan.period });
    result.payouts.push(
      payout.status === 'skipped'
        ? { orgId, status: 'skipped', reason: payout.reason }
        : payout.status === 'paid'
          ? { orgId, status: 'paid', amountCents: payout.amountCents }
          : { orgId, status: 'failed', amountCents: payout.amountCents, reason: payout.reason },
    );
  }
  return result;
}
