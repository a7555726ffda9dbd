/** usage_events partition maintenance (core/usage/usage-partitions.ts): idempotent, serialised by an advisory lock. */
import type { UsagePartitionsService } from '../core/usage/usage-partitions.js';

// Workflow payload types, for workflows/ (which may import types from activities/ only).
export type { UsagePartitionsResult } from '../core/temporal/contracts.js';

export function createUsageActivities(deps: { usagePartitions: UsagePartitionsService }) {
  return {
    maintainUsagePartitions: () => deps.usagePartitions.maintain(),
  };
}

export type UsageActivities = ReturnType<typeof createUsageActivities>;
