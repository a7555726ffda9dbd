/**
 * usage_events partition maintenance (Temporal Schedule `usage-partitions`, daily, overlap skip): partitions for the
 * coming months are created, months past USAGE_RETENTION_DAYS that the rollups have folded in are detached and
 * dropped. One idempotent activity; a repeated run changes nothing.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { UsageActivities, UsagePartitionsResult } from '../activities/usage.activities.js';

const { maintainUsagePartitions } = proxyActivities<UsageActivities>({
  // Creating a month may move rows out of the default partition; dropping one is quick.
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '10 seconds', maximumInterval: '5 minutes', maximumAttempts: 5 },
});

export async function usagePartitionsWorkflow(): Promise<UsagePartitionsResult> {
  return maintainUsagePartitions();
}
