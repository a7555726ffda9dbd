/**
 * The catalog rollups (Temporal Schedule `catalog-rollups`, every 30 s, overlap skip): usage into hourly buckets and
 * window stats, then merit scores and today's history point, then board ranks, then market events. Each step is an
 * idempotent activity that recomputes what it writes, so a retried or repeated run converges on the same tables.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { CatalogRollupsResult, RollupActivities } from '../activities/rollups.activities.js';

const { rollupUsage, rollupScores, rollupRanks, rollupMarketEvents } = proxyActivities<RollupActivities>({
  // A run is due every 30 s; a step that takes longer is stuck, and the next run starts over from the watermark.
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 3 },
});

export async function catalogRollupsWorkflow(): Promise<CatalogRollupsResult> {
  const usage = await rollupUsage();
  const scores = await rollupScores();
  const ranks = await rollupRanks();
  const market = await rollupMarketEvents();
  return { usage, scores, ranks, market };
}
