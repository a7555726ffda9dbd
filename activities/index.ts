/** Builds every activity from the process's services (the worker is their composition root). */
import type { Services } from '../platform/services.js';
import { createBillingActivities } from './billing.activities.js';
import { createCreditActivities } from './credits.activities.js';
import { createDemandActivities } from './demand.activities.js';
import { createProviderActivities } from './providers.activities.js';
import { createRollupActivities } from './rollups.activities.js';
import { createUsageActivities } from './usage.activities.js';

export type ActivityServices = Pick<
  Services,
  | 'ledger'
  | 'orm'
  | 'providerLifecycle'
  | 'providerEndpoints'
  | 'priceChanges'
  | 'connect'
  | 'charges'
  | 'reconciliation'
  | 'billingCycle'
  | 'payouts'
  | 'gatewayEvents'
  | 'rollups'
  | 'usagePartitions'
  | 'demand'
>;

export function createActivities(services: ActivityServices) {
  return {
    ...createCreditActivities({ ledger: services.ledger, orm: services.orm, events: services.gatewayEvents }),
    ...createProviderActivities({
      providerLifecycle: services.providerLifecycle,
      providerEndpoints: services.providerEndpoints,
      priceChanges: services.priceChanges,
      connect: services.connect,
      demand: services.demand,
    }),
    ...createRollupActivities({ rollups: services.rollups }),
    ...createUsageActivities({ usagePartitions: services.usagePartitions }),
    ...createDemandActivities({ demand: services.demand }),
    ...createBillingActivities({
      charges: services.charges,
      reconciliation: services.reconciliation,
      billingCycle: services.billingCycle,
      payouts: services.payouts,
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
