/**
 * The catalog rollups: usage into hourly buckets and window stats, then merit scores and today's history point, then
 * board ranks, then market events. Each step is an idempotent activity that recomputes what it writes, so a retried or
 * repeated pass converges on the same tables.
 *
 * The Temporal Schedule `catalog-rollups` starts one run an hour (overlap skip) that makes a pass every 30 s for the
 * hour (`input.loop`), so boards stay fresh within 60 s of a call while the operator's workflow list shows 24 runs a
 * day instead of ~2,900. Without `loop` a run is one pass (operators and tests: `runRollupsNow`).
 */
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { CatalogRollupsResult, RollupActivities } from '../activities/rollups.activities.js';
import type { CatalogRollupsInput } from '../core/temporal/contracts.js';

const { rollupUsage, rollupScores, rollupRanks, rollupMarketEvents } = proxyActivities<RollupActivities>({
  // A pass is due every 30 s; a step that takes longer is stuck, and the next pass starts over from the watermark.
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 3 },
});

async function pass(): Promise<CatalogRollupsResult> {
  const usage = await rollupUsage();
  const scores = await rollupScores();
  const ranks = await rollupRanks();
  const market = await rollupMarketEvents();
  return { usage, scores, ranks, market };
}

export async function catalogRollupsWorkflow(input: CatalogRollupsInput = {}): Promise<CatalogRollupsResult> {
  const started = Date.now(); // workflow time: deterministic on replay
  let last = await pass();
  let passes = 1;
  const loop = input.loop;
  while (loop && Date.now() - started + loop.everyMs < loop.forMs) {
    await sleep(loop.everyMs);
    last = await pass();
    passes++;
  }
  return loop ? { passes, ...last } : last;
}
