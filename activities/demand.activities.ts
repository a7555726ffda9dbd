/** Demand board housekeeping (core/demand/confirmation-link.ts): idempotent, a repeated run forgets nothing more. */
import type { DemandService } from '../core/demand/demand.service.js';

// Workflow payload types, for workflows/ (which may import types from activities/ only).
export type { DemandEmailCleanupResult } from '../core/temporal/contracts.js';

export function createDemandActivities(deps: { demand: DemandService }) {
  return {
    forgetUnconfirmedDemandEmails: () => deps.demand.forgetUnconfirmedEmails(),
  };
}

export type DemandActivities = ReturnType<typeof createDemandActivities>;
