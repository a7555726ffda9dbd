/** Builds every activity from the process's services (the worker is their composition root). */
import type { Services } from '../core/services.js';
import { createCreditActivities } from './credits.activities.js';

export function createActivities(services: Pick<Services, 'ledger' | 'orm'>) {
  return {
    ...createCreditActivities({ ledger: services.ledger, orm: services.orm }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
