/** Builds every activity from the process's services (the worker is their composition root). */
import type { Services } from '../core/services.js';
import { createBillingActivities } from './billing.activities.js';
import { createCreditActivities } from './credits.activities.js';
import { createProviderActivities } from './providers.activities.js';

export type ActivityServices = Pick<
  Services,
  | 'ledger'
  | 'orm'
  | 'providers'
  | 'connect'
  | 'charges'
  | 'reconciliation'
  | 'billingCycle'
  | 'payouts'
  | 'gatewayEvents'
>;

export function createActivities(services: ActivityServices) {
  return {
    ...createCreditActivities({ ledger: services.ledger, orm: services.orm, events: services.gatewayEvents }),
    ...createProviderActivities({ providers: services.providers, connect: services.connect }),
    ...createBillingActivities({
      charges: services.charges,
      reconciliation: services.reconciliation,
      billingCycle: services.billingCycle,
      payouts: services.payouts,
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
