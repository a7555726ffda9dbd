/**
 * An announced endpoint removal (docs/decisions.md, issue 31): a durable timer to the sunset, then the endpoint
 * leaves the listing (moved to removed_endpoints; its calls answer 410 `endpoint_removed`), the gateways and the
 * agent-tool servers are told (installed tools update, `list_changed`). Adding the endpoint again before the sunset
 * cancels the run; the remove step only acts if the endpoint still carries this exact sunset, so a withdrawn or
 * replaced removal can never apply late.
 */
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { ProviderActivities } from '../activities/providers.activities.js';
import type { EndpointRemovalInput, EndpointRemovalResult } from './endpoint-removal.messages.js';

const { removeEndpointAtSunset } = proxyActivities<ProviderActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', nonRetryableErrorTypes: ['NotFoundError'] },
});

export async function endpointRemovalWorkflow(input: EndpointRemovalInput): Promise<EndpointRemovalResult> {
  const wait = Date.parse(input.sunsetAt) - Date.now(); // workflow time: deterministic on replay
  if (wait > 0) await sleep(wait);
  const removed = await removeEndpointAtSunset(input);
  return { removed };
}
