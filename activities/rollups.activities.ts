/** Catalog rollup activities: each step of core/catalog/rollups/rollups.service.ts, idempotent and serialised by a lock. */
import type { RollupsService } from '../core/catalog/rollups/rollups.service.js';

// Workflow payload types, for workflows/ (which may import types from activities/ only).
export type { CatalogRollupsResult } from '../core/temporal/contracts.js';

export function createRollupActivities(deps: { rollups: RollupsService }) {
  return {
    rollupUsage: () => deps.rollups.rollupUsage(),
    rollupScores: () => deps.rollups.rollupScores(),
    rollupRanks: () => deps.rollups.rollupRanks(),
    rollupMarketEvents: () => deps.rollups.rollupMarketEvents(),
  };
}

export type RollupActivities = ReturnType<typeof createRollupActivities>;
