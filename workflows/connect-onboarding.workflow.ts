/**
 * Stripe Connect onboarding of a provider: the account exists and the person is completing Stripe's hosted
 * identity steps; this waits (durably, as long as it takes) for Stripe's account.updated to say payouts are enabled,
 * then records it. Updates that are not there yet are recorded too, so the provider sees progress.
 */
import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { ProviderActivities } from '../activities/providers.activities.js';
import {
  accountUpdatedSignal,
  type AccountUpdate,
  type ConnectOnboardingInput,
  type ConnectOnboardingResult,
} from './connect-onboarding.messages.js';

const { recordConnectStatus } = proxyActivities<ProviderActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', nonRetryableErrorTypes: ['NotFoundError'] },
});

export async function connectOnboardingWorkflow(input: ConnectOnboardingInput): Promise<ConnectOnboardingResult> {
  const updates: AccountUpdate[] = [];
  setHandler(accountUpdatedSignal, (update) => {
    updates.push(update);
  });
  for (;;) {
    await condition(() => updates.length > 0);
    const update = updates.shift()!;
    const enabled = update.charges_enabled && update.payouts_enabled && update.details_submitted;
    await recordConnectStatus({
      orgId: input.orgId,
      accountId: input.accountId,
      status: enabled ? 'enabled' : 'pending',
    });
    if (enabled) return { status: 'enabled' };
  }
}
