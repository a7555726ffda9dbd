/** Row lookups shared by the subjects that change a provider's listing (provider listings, their prices). */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Api, Endpoint, type IApi, type IEndpoint } from '../../db/entities/index.js';
import type { Principal } from '../auth/scopes.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { isId } from '../ids.js';

/**
 * The caller's listing, or 404 (another org's listing answers 404 too). `lock`: the row is locked for the rest of
 * the transaction, so changes to one listing's endpoints run one at a time.
 */
export async function ownApi(em: EntityManager, principal: Principal, apiId: string, lock = false): Promise<IApi> {
  const api = isId('api', apiId)
    ? await em.findOne(Api, { id: apiId, org: principal.orgId }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {})
    : null;
  if (!api) throw new NotFoundError(`No API ${apiId}.`);
  return api;
}

/** An archived listing is read-only until it is restored (409 otherwise, saying how). */
export function assertNotArchived(api: IApi): void {
  if (api.status !== 'archived') return;
  throw new ConflictError(
    `${api.slug} is archived; restore it to a draft first (POST /v1/provider/apis/${api.id}/restore).`,
    { details: { status: 'archived', api_id: api.id } },
  );
}

/** A listing's endpoints in their listed order. */
export async function endpointsOf(em: EntityManager, apiId: string): Promise<IEndpoint[]> {
  return em.find(Endpoint, { api: apiId }, { orderBy: { position: 'asc', id: 'asc' } });
}
