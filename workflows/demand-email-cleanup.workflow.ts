/**
 * The demand board's double opt-in housekeeping (Temporal Schedule `demand-email-cleanup`, daily at 03:15 UTC, overlap
 * skip): an address left with an API request and not confirmed within its link's 7 days is forgotten (the vote
 * stays). One idempotent activity; a repeated run forgets nothing more.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { DemandActivities, DemandEmailCleanupResult } from '../activities/demand.activities.js';

const { forgetUnconfirmedDemandEmails } = proxyActivities<DemandActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', maximumInterval: '2 minutes', maximumAttempts: 5 },
});

export async function demandEmailCleanupWorkflow(): Promise<DemandEmailCleanupResult> {
  return forgetUnconfirmedDemandEmails();
}
