/**
 * A scheduled price increase: a durable timer to the effective time, then the new price is applied. Cancelling the
 * run (cancel-pending-pricing) ends it during the timer. The apply step only writes if the endpoint still carries
 * this exact pending change, so a cancelled or replaced schedule can never apply late.
 */
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { ProviderActivities } from '../activities/providers.activities.js';
import type { PriceChangeInput, PriceChangeResult } from './price-change.messages.js';

const { applyScheduledPrice } = proxyActivities<ProviderActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', nonRetryableErrorTypes: ['NotFoundError'] },
});

export async function priceChangeWorkflow(input: PriceChangeInput): Promise<PriceChangeResult> {
  const wait = Date.parse(input.effectiveAt) - Date.now(); // workflow time: deterministic on replay
  if (wait > 0) await sleep(wait);
  const applied = await applyScheduledPrice({
    endpointId: input.endpointId,
    priceCents: input.priceCents,
    effectiveAt: input.effectiveAt,
  });
  return { applied };
}
