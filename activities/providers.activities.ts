/** Provider activities: listing lifecycle, revisions, endpoint removals, scheduled prices and Connect status. Each is idempotent. */
import type { ConnectService } from '../core/billing/connect.service.js';
import type { DemandService } from '../core/demand/demand.service.js';
import type { PriceChangesService } from '../core/pricing/price-changes.service.js';
import type { ProviderEndpointsService } from '../core/providers/endpoints.service.js';
import type { ProviderLifecycleService } from '../core/providers/lifecycle.service.js';
import type { EndpointRemovalInput, VerificationResult } from '../core/temporal/contracts.js';

// Workflow payload types, for workflows/ (which may import types from activities/ only).
export type {
  AccountUpdate,
  ConnectOnboardingInput,
  ConnectOnboardingResult,
  EndpointRemovalInput,
  EndpointRemovalResult,
  PriceChangeInput,
  PriceChangeResult,
  PublishAction,
  PublishInput,
  PublishResult,
  VerificationResult,
} from '../core/temporal/contracts.js';

export function createProviderActivities(deps: {
  providerLifecycle: ProviderLifecycleService;
  providerEndpoints: ProviderEndpointsService;
  priceChanges: PriceChangesService;
  connect: ConnectService;
  demand: DemandService;
}) {
  return {
    async smokeTestApi(input: { apiId: string }): Promise<VerificationResult> {
      return deps.providerLifecycle.smokeTest(input.apiId);
    },
    async publishApi(input: { apiId: string }): Promise<void> {
      await deps.providerLifecycle.setStatus(input.apiId, 'live');
      // Tell people who asked for such an API (at most once each); a failure here never fails the publish.
      await deps.demand.onPublished(input.apiId);
    },
    async unpublishApi(input: { apiId: string }): Promise<void> {
      await deps.providerLifecycle.setStatus(input.apiId, 'draft');
      // A draft's endpoints change at once: what its open revision staged is applied to the draft.
      await deps.providerEndpoints.applyRevision(input.apiId);
    },
    async smokeTestRevision(input: { apiId: string; revisionId: string }): Promise<VerificationResult | null> {
      return deps.providerLifecycle.smokeTestRevision(input.apiId, input.revisionId);
    },
    async applyRevision(input: { apiId: string; revisionId: string }): Promise<boolean> {
      return deps.providerEndpoints.applyRevision(input.apiId, input.revisionId);
    },
    async removeEndpointAtSunset(input: EndpointRemovalInput): Promise<boolean> {
      return deps.providerEndpoints.removeAtSunset(input);
    },
    async applyScheduledPrice(input: {
      endpointId: string;
      priceCents: number;
      effectiveAt: string;
    }): Promise<boolean> {
      return deps.priceChanges.applyScheduledPrice(input);
    },
    async recordConnectStatus(input: {
      orgId: string;
      accountId: string;
      status: 'pending' | 'enabled';
    }): Promise<void> {
      await deps.connect.recordStatus(input);
    },
  };
}

export type ProviderActivities = ReturnType<typeof createProviderActivities>;
