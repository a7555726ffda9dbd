/**
 * Retiring a listing (issue 31; docs/decisions.md): a draft that was never live can be deleted (its endpoints and
 * documents with it, its slug free again); a listing that was ever live (`published_at` set) is archived instead:
 * out of search and the storefront, its URLs and the gateway answer 410 `api_archived`, and its history, usage,
 * earnings and ledger rows stay, as does its slug (taken, by its own org only). Only a draft is archived (a live one
 * is unpublished first); the owner can restore an archived listing to a draft and publish it again.
 */
import { ForeignKeyConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { ApiRevision, type IApi } from '../../db/entities/index.js';
import type { Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { endpointsOf, ownApi } from '../db/owned-api.js';
import { ConflictError } from '../errors.js';
import type { GatewayEvents } from '../spend/gateway-events.js';
import { listingView, type ProviderApiView } from './listing-views.js';
import type { DeletedApiView } from './providers.schemas.js';

export interface RetirementDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  events: GatewayEvents;
}

export class ProviderRetirementService {
  constructor(private readonly deps: RetirementDeps) {}

  /** Archive a draft (idempotent); a live listing is 409, saying to unpublish it first. */
  async archive(principal: Principal, apiId: string): Promise<ProviderApiView> {
    const view = await this.deps.orm.em.fork().transactional(async (tem) => {
      const api = await ownApi(tem, principal, apiId, true);
      if (api.status === 'live') {
        throw new ConflictError(
          `${api.slug} is live: unpublish it first (POST /v1/provider/apis/${api.id}/unpublish), then archive it.`,
          { details: { status: 'live', api_id: api.id } },
        );
      }
      if (api.status === 'draft') {
        api.status = 'archived';
        api.archivedAt = this.deps.clock.now();
        // Nothing is staged on a retired listing.
        await tem.nativeUpdate(
          ApiRevision,
          { api: api.id, status: 'open' },
          { status: 'discarded', discardedAt: api.archivedAt },
        );
      }
      return this.view(tem, api);
    });
    await this.deps.events.listingChanged(view.slug);
    return view;
  }

  /** Restore an archived listing to a draft (idempotent for a draft; a live one is 409). */
  async restore(principal: Principal, apiId: string): Promise<ProviderApiView> {
    const view = await this.deps.orm.em.fork().transactional(async (tem) => {
      const api = await ownApi(tem, principal, apiId, true);
      if (api.status === 'live') {
        throw new ConflictError(`${api.slug} is live, not archived.`, { details: { status: 'live', api_id: api.id } });
      }
      if (api.status === 'archived') {
        api.status = 'draft';
        api.archivedAt = null;
      }
      return this.view(tem, api);
    });
    await this.deps.events.listingChanged(view.slug);
    return view;
  }

  /** Delete a listing that was never live; one that was is 409, saying to archive it. */
  async delete(principal: Principal, apiId: string): Promise<DeletedApiView> {
    const slug = await this.deps.orm.em
      .fork()
      .transactional(async (tem) => {
        const api = await ownApi(tem, principal, apiId, true);
        if (api.publishedAt || api.status === 'live') {
          throw new ConflictError(
            `${api.slug} was live, so it cannot be deleted (its calls, earnings and ledger rows point at it): ` +
              `unpublish it if it is live, then archive it (POST /v1/provider/apis/${api.id}/archive).`,
            { details: { status: api.status, api_id: api.id, published_at: api.publishedAt?.toISOString() ?? null } },
          );
        }
        // Its own documents go with it (an org-wide document is not its own).
        await tem.execute('delete from documents where api_id = ?', [api.id]);
        await tem.execute('delete from apis where id = ?', [api.id]);
        tem.getUnitOfWork().unsetIdentity(api);
        return api.slug;
      })
      .catch((err: unknown) => {
        if (err instanceof ForeignKeyConstraintViolationException) {
          throw new ConflictError('This API has documents others accepted: archive it instead.', {
            details: { api_id: apiId },
          });
        }
        throw err;
      });
    await this.deps.events.listingChanged(slug);
    return { api_id: apiId, slug, deleted: true };
  }

  private async view(em: EntityManager, api: IApi): Promise<ProviderApiView> {
    await em.flush();
    return listingView(api, await endpointsOf(em, api.id), this.deps.config.urls, this.deps.clock.now());
  }
}
