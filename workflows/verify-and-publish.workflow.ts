/**
 * A listing's lifecycle steps, one run per request under the business id `publish:{apiId}`:
 * - verify: smoke-test the upstream with the injected credential and store the evidence;
 * - publish: verify (unless skipped), and only if it passed, flip the listing live (visible in the catalog);
 * - unpublish: back to draft (an open revision is applied to the draft);
 * - publish_revision: a live listing's open revision: smoke-test its new and changed endpoints (unless skipped), and
 *   only if that passed, apply it at once (removals are announced with their notice).
 * Each step is an idempotent activity, so a retried run converges on the same state.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { ProviderActivities } from '../activities/providers.activities.js';
import type { PublishInput, PublishResult } from './verify-and-publish.messages.js';

const { smokeTestApi, publishApi, unpublishApi, smokeTestRevision, applyRevision } =
  proxyActivities<ProviderActivities>({
    // The smoke test calls each checked endpoint with its own timeout; this bounds the whole step.
    startToCloseTimeout: '2 minutes',
    retry: {
      initialInterval: '1 second',
      maximumInterval: '30 seconds',
      maximumAttempts: 5,
      nonRetryableErrorTypes: ['NotFoundError', 'ValidationError', 'ConflictError'],
    },
  });

async function publishRevision(input: PublishInput): Promise<PublishResult> {
  const revision = { apiId: input.apiId, revisionId: input.revisionId ?? '' };
  const verification = input.skipVerify ? null : await smokeTestRevision(revision);
  if (verification && !verification.passed) {
    return { action: 'publish_revision', status: 'live', verification, revision_published: false };
  }
  const applied = await applyRevision(revision);
  return { action: 'publish_revision', status: 'live', verification, revision_published: applied };
}

export async function verifyAndPublishWorkflow(input: PublishInput): Promise<PublishResult> {
  if (input.action === 'publish_revision') return publishRevision(input);
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
