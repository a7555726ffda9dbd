/**
 * A listing's lifecycle steps, one run per request under the business id `publish:{apiId}`:
 * - verify: smoke-test the upstream with the injected credential and store the evidence;
 * - publish: verify (unless skipped), and only if it passed, flip the listing live (visible in the catalog);
 * - unpublish: back to draft.
 * Each step is an idempotent activity, so a retried run converges on the same state.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { ProviderActivities } from '../activities/providers.activities.js';
import type { PublishInput, PublishResult } from './verify-and-publish.messages.js';

const { smokeTestApi, publishApi, unpublishApi } = proxyActivities<ProviderActivities>({
  // The smoke test calls each checked endpoint with its own timeout; this bounds the whole step.
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '30 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: ['NotFoundError', 'ValidationError', 'ConflictError'],
  },
});

export async function verifyAndPublishWorkflow(input: PublishInput): Promise<PublishResult> {
  if (input.action === 'unpublish') {
    await unpublishApi({ apiId: input.apiId });
    return { action: 'unpublish', status: 'draft', verification: null };
  }
  const verification =
    input.action === 'verify' || !input.skipVerify ? await smokeTestApi({ apiId: input.apiId }) : null;
  if (input.action === 'verify' || (verification && !verification.passed)) {
    return { action: input.action, status: 'draft', verification };
  }
  await publishApi({ apiId: input.apiId });
  return { action: 'publish', status: 'live', verification };
}
