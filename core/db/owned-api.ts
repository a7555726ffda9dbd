/** Row lookups shared by the subjects that change a provider's listing (provider listings, their prices). */
import type { EntityManager } from '@mikro-orm/postgresql';
import { Api, Endpoint, type IApi, type IEndpoint } from '../../db/entities/index.js';
import type { Principal } from '../auth/scopes.js';
import { NotFoundError } from '../errors.js';
import { isId } from '../ids.js';

/** The caller's listing, or 404 (another org's listing answers 404 too). */
export async function ownApi(em: EntityManager, principal: Principal, apiId: string): Promise<IApi> {
  const api = isId('api', apiId) ? await em.findOne(Api, { id: apiId, org: principal.orgId }) : null;
  if (!api) throw new NotFoundError(`No API ${apiId}.`);
  return api;
}

/** A listing's endpoints in their listed order. */
export async function endpointsOf(em: EntityManager, apiId: string): Promise<IEndpoint[]> {
  return em.find(Endpoint, { api: apiId }, { orderBy: { position: 'asc', id: 'asc' } });
}
