/**
 * Writing a change set (endpoint-plan.ts) to a listing's endpoints, in the caller's transaction: changes in place,
 * additions (an addition with the method and path of an endpoint whose removal is announced keeps that endpoint and
 * withdraws the removal), and removals:
 * - a never-live draft's endpoint is deleted;
 * - an ever-live draft's endpoint is removed now (moved to removed_endpoints: its calls answer 410 once it is live);
 * - a live listing's endpoint is removed after the notice of a price increase (PRICE_INCREASE_NOTICE_DAYS):
 *   `removal_announced_at` and `sunset_at` are set and endpointRemovalWorkflow removes it at the sunset; an endpoint
 *   with no call in the last 30 days is removed now (nobody is broken).
 * After the commit, `announce` tells the gateways and agent-tool servers (installed tools update, `list_changed`)
 * and refreshes the search index of a live listing.
 */
import { TOOLS_CHANGED_CHANNEL } from '../agent-tools/installed-tools.service.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  Endpoint,
  type IApi,
  type IEndpoint,
  type RevisionChanges,
  type StagedEndpoint,
} from '../../db/entities/index.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { CounterStore } from '../counters/index.js';
import type { Logger } from '../logger.js';
import type { GatewayEvents } from '../spend/gateway-events.js';
import type { TemporalService } from '../temporal/temporal.service.js';
import type { RemovedEndpointView } from './endpoint-changes.schemas.js';

/** An endpoint without a call in this long is removed at once (no caller to warn). */
export const QUIET_REMOVAL_MS = 30 * 86_400_000;

// A removed endpoint's installed tools are deleted with it, so the keys that had one are told by key
// (TOOLS_CHANGED_CHANNEL): the listing's own message would no longer find them.

export type ApplyMode = 'draft' | 'live';

/** What a change set did, for the answer and for `announce`. */
export interface Applied {
  added: IEndpoint[];
  updated: IEndpoint[];
  removed: RemovedEndpointView[];
  /** Keys whose installed tools went with a removed endpoint. */
  toolKeys: string[];
}

export interface EndpointWriterDeps {
  config: Config;
  clock: Clock;
  temporal: TemporalService;
  events: GatewayEvents;
  counters: Pick<CounterStore, 'publish'>;
  logger: Logger;
  searchIndex?: { index(apiIds: readonly string[]): Promise<number> };
}

const keyOf = (e: { method: string; path: string }) => `${e.method} ${e.path}`;

export class EndpointWriter {
  constructor(private readonly deps: EndpointWriterDeps) {}

  /** Apply `changes` to the listing (whose endpoints are `current`) in `em`'s transaction, and flush. */
  async apply(
    em: EntityManager,
    api: IApi,
    current: IEndpoint[],
    changes: RevisionChanges,
    mode: ApplyMode,
  ): Promise<Applied> {
    const byId = new Map(current.map((e) => [e.id, e]));
    const applied: Applied = { added: [], updated: [], removed: [], toolKeys: [] };
    const removing = new Set(changes.remove);
    for (const id of changes.remove) {
      const endpoint = byId.get(id);
      if (endpoint) applied.removed.push(await this.removeOne(em, api, endpoint, mode, applied.toolKeys));
    }
    for (const u of changes.update) {
      const endpoint = byId.get(u.endpoint_id);
      if (!endpoint || removing.has(endpoint.id)) continue;
      const { endpoint_id: _id, ...fields } = u;
      setFields(endpoint, fields);
      applied.updated.push(endpoint);
    }
    let position = Math.max(-1, ...current.map((e) => e.position));
    for (const a of changes.add) {
      // The method and path of an endpoint whose removal is announced keep that endpoint (the removal withdrawn);
      // one added meanwhile by another change (a revision staged earlier) is updated rather than duplicated.
      const existing = current.find((e) => !removing.has(e.id) && keyOf(e) === keyOf(a));
      if (existing) {
        if (existing.sunsetAt) await this.withdrawRemoval(api, existing);
        setFields(existing, a);
        applied.updated.push(existing);
      } else {
        applied.added.push(em.create(Endpoint, newEndpoint(api, a, ++position)));
      }
    }
    await em.flush();
    return applied;
  }

  /** Tell everyone who caches the listing (after the commit); never fails the caller. */
  async announce(api: IApi, applied: Pick<Applied, 'toolKeys'>): Promise<void> {
    await this.deps.events.listingChanged(api.slug);
    for (const keyId of new Set(applied.toolKeys)) {
      await this.deps.counters.publish(TOOLS_CHANGED_CHANNEL, keyId).catch((err: unknown) => {
        this.deps.logger.warn({ err, key_id: keyId }, 'could not tell agent-tool servers about a removed tool');
      });
    }
    if (api.status !== 'live') return;
    await this.deps.searchIndex?.index([api.id]).catch((err: unknown) => {
      this.deps.logger.warn({ api_id: api.id, err }, 'search index refresh failed');
    });
  }

  /**
   * Activity: remove an endpoint whose announced sunset has come, if it still carries exactly that sunset. Returns
   * the keys whose installed tools went with it, or null when there was nothing to remove.
   */
  async removeAtSunset(em: EntityManager, endpointId: string, sunsetAt: Date): Promise<string[] | null> {
    const endpoint = await em.findOne(Endpoint, { id: endpointId, sunsetAt });
    if (!endpoint) return null;
    const keys: string[] = [];
    await this.moveToRemoved(em, endpoint, sunsetAt, keys);
    return keys;
  }

  private async removeOne(
    em: EntityManager,
    api: IApi,
    endpoint: IEndpoint,
    mode: ApplyMode,
    toolKeys: string[],
  ): Promise<RemovedEndpointView> {
    const now = this.deps.clock.now();
    const head = { endpoint_id: endpoint.id, method: endpoint.method, path: endpoint.path };
    if (mode === 'draft' && !api.publishedAt) {
      await em.execute('delete from endpoints where id = ?', [endpoint.id]);
      em.getUnitOfWork().unsetIdentity(endpoint);
      return { ...head, effect: 'deleted', sunset_at: null };
    }
    if (mode === 'live' && endpoint.sunsetAt) {
      return { ...head, effect: 'scheduled', sunset_at: endpoint.sunsetAt.toISOString() };
    }
    const noticeMs = this.deps.config.providers.priceIncreaseNoticeMs;
    if (mode === 'live' && noticeMs > 0 && (await this.calledRecently(em, api, endpoint, now))) {
      const sunsetAt = new Date(now.getTime() + noticeMs);
      endpoint.removalAnnouncedAt = now;
      endpoint.sunsetAt = sunsetAt;
      // Inside the transaction: if Temporal cannot take the timer, nothing is announced and the caller may retry.
      await em.flush();
      await this.deps.temporal.scheduleEndpointRemoval(
        { apiId: api.id, endpointId: endpoint.id, sunsetAt: sunsetAt.toISOString() },
        { apiSlug: api.slug, orgId: api.org.id },
      );
      return { ...head, effect: 'scheduled', sunset_at: sunsetAt.toISOString() };
    }
    if (endpoint.sunsetAt) await this.deps.temporal.cancelEndpointRemoval(api.id, endpoint.id);
    await this.moveToRemoved(em, endpoint, now, toolKeys);
    return { ...head, effect: 'removed', sunset_at: now.toISOString() };
  }

  /** Whether the endpoint answered a call in the last 30 days (usage_events_api_created_idx). */
  private async calledRecently(em: EntityManager, api: IApi, endpoint: IEndpoint, now: Date): Promise<boolean> {
    const rows = await em.execute(
      'select 1 from usage_events where api_id = ? and endpoint_id = ? and created_at >= ? limit 1',
      [api.id, endpoint.id, new Date(now.getTime() - QUIET_REMOVAL_MS)],
    );
    return rows.length > 0;
  }

  /** The row moves to removed_endpoints (same id); its installed tools go with it (their keys are noted). */
  private async moveToRemoved(em: EntityManager, endpoint: IEndpoint, at: Date, toolKeys: string[]): Promise<void> {
    await em.execute(
      `insert into removed_endpoints (id, api_id, method, path, summary, operation_id, input_schema, output_schema,
              price_cents, removal_announced_at, removed_at, created_at)
       select id, api_id, method, path, summary, operation_id, input_schema, output_schema, price_cents,
              coalesce(removal_announced_at, ?), ?, created_at
         from endpoints where id = ?
       on conflict (id) do nothing`,
      [at, at, endpoint.id],
    );
    const keys = await em.execute<{ key_id: string }[]>(
      'select distinct key_id from mcp_installed_tools where endpoint_id = ?',
      [endpoint.id],
    );
    toolKeys.push(...keys.map((k) => k.key_id));
    await em.execute('delete from endpoints where id = ?', [endpoint.id]);
    em.getUnitOfWork().unsetIdentity(endpoint);
  }

  private async withdrawRemoval(api: IApi, endpoint: IEndpoint): Promise<void> {
    endpoint.removalAnnouncedAt = null;
    endpoint.sunsetAt = null;
    await this.deps.temporal.cancelEndpointRemoval(api.id, endpoint.id);
  }
}

function setFields(endpoint: IEndpoint, fields: Partial<Omit<StagedEndpoint, 'endpoint_id'>>): void {
  if (fields.summary !== undefined) endpoint.summary = fields.summary;
  if (fields.operation_id !== undefined) endpoint.operationId = fields.operation_id;
  if (fields.input_schema !== undefined) endpoint.inputSchema = fields.input_schema;
  if (fields.output_schema !== undefined) endpoint.outputSchema = fields.output_schema;
}

function newEndpoint(api: IApi, a: StagedEndpoint, position: number) {
  return {
    id: a.endpoint_id,
    api,
    method: a.method,
    path: a.path,
    summary: a.summary,
    operationId: a.operation_id,
    inputSchema: a.input_schema,
    outputSchema: a.output_schema,
    priceCents: a.price_cents,
    position,
  };
}
