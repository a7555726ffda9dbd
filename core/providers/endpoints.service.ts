/**
 * A listing's endpoints after creation (issue 31; docs/decisions.md): add, change, remove, re-import from OpenAPI.
 * A draft's endpoints change at once; a live listing's changes are staged in its open revision (api_revisions),
 * which goes live through verifyAndPublishWorkflow (`publish_revision`, lifecycle.service.ts) or is discarded. An
 * archived listing is read-only (409). Every answer is an EndpointChangesView; every refusal names its field in
 * `details.field`, so a form can show it beside the input. The workflows' activities are here too: apply a revision
 * (published, or on unpublish to the draft) and remove an endpoint at its sunset.
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { Api, ApiRevision, type IApi, type IApiRevision, type IEndpoint } from '../../db/entities/index.js';
import type { Principal } from '../auth/scopes.js';
import { assertNotArchived, endpointsOf, ownApi } from '../db/owned-api.js';
import { NotFoundError } from '../errors.js';
import { newId } from '../ids.js';
import { endpointView } from '../pricing/endpoint-view.js';
import type { UpstreamGuard } from '../upstream/upstream-guard.js';
import type {
  EndpointChangesView,
  EndpointPatchBody,
  ImportEndpointsBody,
  RevisionView,
} from './endpoint-changes.schemas.js';
import { EndpointPlan, type PlanRequest } from './endpoint-plan.js';
import { EndpointWriter, type Applied, type EndpointWriterDeps } from './endpoint-writes.js';
import { fetchOpenApi } from './openapi-fetch.js';
import { openApiSource } from './providers.service.js';
import type { EndpointInput } from './providers.schemas.js';
import { changeMessage, projectedView, revisionView, stagedView } from './revision-views.js';

export interface EndpointsDeps extends EndpointWriterDeps {
  orm: MikroORM;
  guard: UpstreamGuard;
}

/** A request, or one computed from the endpoints as they would be (a re-import compares against those). */
type RequestOf = PlanRequest | ((plan: EndpointPlan) => PlanRequest);

/** What a change did inside its transaction. */
type Outcome =
  | { api: IApi; staged: false; applied: Applied }
  | { api: IApi; staged: true; plan: EndpointPlan; revision: IApiRevision | null; current: IEndpoint[] };

export class ProviderEndpointsService {
  private readonly writer: EndpointWriter;

  constructor(private readonly deps: EndpointsDeps) {
    this.writer = new EndpointWriter(deps);
  }

  add(principal: Principal, apiId: string, body: EndpointInput): Promise<EndpointChangesView> {
    return this.change(principal, apiId, { add: [body] });
  }

  update(principal: Principal, apiId: string, endpointId: string, body: EndpointPatchBody) {
    return this.change(principal, apiId, { update: [{ ...body, endpoint_id: endpointId }] });
  }

  remove(principal: Principal, apiId: string, endpointId: string): Promise<EndpointChangesView> {
    return this.change(principal, apiId, { remove: [endpointId] });
  }

  /**
   * The endpoints again from an OpenAPI document: an operation whose method and path match an endpoint updates its
   * summary, operation id and schemas (its id and price stay), a new one is added at price 0, and an endpoint the
   * document no longer has is removed unless `keep_missing`.
   */
  async reimport(principal: Principal, apiId: string, body: ImportEndpointsBody): Promise<EndpointChangesView> {
    await ownApi(this.deps.orm.em.fork(), principal, apiId); // 404 before fetching anything
    const { url, doc } = await fetchOpenApi(this.deps.guard, body.url, 'url');
    const source = openApiSource(url, doc, this.deps.clock.now().toISOString());
    return this.change(
      principal,
      apiId,
      (plan) => {
        const held = new Map(plan.projected().map((e) => [`${e.method} ${e.path}`, e]));
        const inDoc = new Set(doc.endpoints.map((e) => `${e.method} ${e.path}`));
        const request: Required<PlanRequest> = { add: [], update: [], remove: [] };
        for (const { method, path, ...fields } of doc.endpoints) {
          const hit = held.get(`${method} ${path}`);
          // One being removed is kept by adding it again (its removal withdrawn).
          if (hit && !hit.removing) request.update.push({ endpoint_id: hit.endpoint_id, ...fields });
          else request.add.push({ method, path, ...fields, price_cents: 0 });
        }
        if (!body.keep_missing) {
          request.remove = [...held.entries()]
            .filter(([key, e]) => !inDoc.has(key) && !e.removing)
            .map(([, e]) => e.endpoint_id);
        }
        return request;
      },
      source,
    );
  }

  /** Any changes at once (the agent tool): removals, then changes, then additions. */
  async change(
    principal: Principal,
    apiId: string,
    request: RequestOf,
    importSource?: IApi['importSource'],
  ): Promise<EndpointChangesView> {
    const outcome = await this.deps.orm.em.fork().transactional(async (tem) => {
      const api = await ownApi(tem, principal, apiId, true);
      assertNotArchived(api);
      if (importSource) api.importSource = importSource;
      const current = await endpointsOf(tem, api.id);
      if (api.status === 'live') return this.stage(tem, api, current, request);
      const plan = new EndpointPlan(current);
      plan.apply(typeof request === 'function' ? request(plan) : request);
      const applied = await this.writer.apply(tem, api, current, plan.changes(), 'draft');
      return { api, staged: false, applied } satisfies Outcome;
    });
    if (!outcome.staged) await this.writer.announce(outcome.api, outcome.applied);
    return this.view(outcome);
  }

  /** A live listing's changes go into its open revision (made when there is none). */
  private async stage(tem: EntityManager, api: IApi, current: IEndpoint[], request: RequestOf): Promise<Outcome> {
    let revision = await tem.findOne(ApiRevision, { api: api.id, status: 'open' });
    const plan = new EndpointPlan(current, revision?.changes);
    plan.apply(typeof request === 'function' ? request(plan) : request);
    if (revision) {
      revision.changes = plan.changes();
      // Everything staged was taken back: the revision is dropped.
      if (plan.isEmpty()) Object.assign(revision, { status: 'discarded', discardedAt: this.deps.clock.now() });
    } else if (!plan.isEmpty()) {
      const [row] = await tem.execute<{ last: number | null }[]>(
        'select max(number) as last from api_revisions where api_id = ?',
        [api.id],
      );
      const last = row?.last ?? 0;
      revision = tem.create(ApiRevision, {
        id: newId('revision'),
        api,
        number: Number(last) + 1,
        changes: plan.changes(),
      });
    }
    await tem.flush();
    return { api, staged: true, plan, revision: revision?.status === 'open' ? revision : null, current };
  }

  private view(outcome: Outcome): EndpointChangesView {
    const now = this.deps.clock.now();
    if (!outcome.staged) {
      const { api, applied } = outcome;
      const base = {
        api_id: api.id,
        staged: false,
        added: applied.added.map((e) => endpointView(e, now)),
        updated: applied.updated.map((e) => endpointView(e, now)),
        removed: applied.removed,
        revision: null,
      };
      return { ...base, message: changeMessage(base) };
    }
    const { api, plan, revision, current } = outcome;
    const changes = plan.changes();
    const staged = new Map(changes.add.map((a) => [a.endpoint_id, a]));
    const byId = new Map(current.map((e) => [e.id, e]));
    const base = {
      api_id: api.id,
      staged: true,
      added: plan.outcome.added.flatMap((id) => (staged.has(id) ? [stagedView(staged.get(id)!)] : [])),
      updated: plan.outcome.updated.flatMap((id) => {
        const e = byId.get(id);
        if (e) return [projectedView(e, revision, now)];
        return staged.has(id) ? [stagedView(staged.get(id)!)] : [];
      }),
      removed: plan.outcome.removed.flatMap((id) => {
        const e = byId.get(id);
        return e
          ? [{ endpoint_id: id, method: e.method, path: e.path, effect: 'staged' as const, sunset_at: null }]
          : [];
      }),
      revision: revision ? revisionView(revision, current) : null,
    };
    return { ...base, message: changeMessage(base) };
  }

  /** The live listing's open revision, or null. */
  async revision(principal: Principal, apiId: string): Promise<RevisionView | null> {
    const em = this.deps.orm.em.fork();
    const api = await ownApi(em, principal, apiId);
    const revision = await em.findOne(ApiRevision, { api: api.id, status: 'open' });
    return revision ? revisionView(revision, await endpointsOf(em, api.id)) : null;
  }

  /** Drop the open revision: nothing it staged is applied (404 when there is none). */
  async discardRevision(principal: Principal, apiId: string): Promise<RevisionView> {
    const em = this.deps.orm.em.fork();
    const api = await ownApi(em, principal, apiId);
    const revision = await em.findOne(ApiRevision, { api: api.id, status: 'open' });
    if (!revision) throw new NotFoundError(`${api.slug} has no open revision.`);
    revision.status = 'discarded';
    revision.discardedAt = this.deps.clock.now();
    await em.flush();
    return revisionView(revision, await endpointsOf(em, api.id));
  }

  /**
   * Activity: apply an open revision (the one named, or whichever is open when none is): as a live listing's
   * changes, or to the draft when the listing is no longer live (unpublish). False when there was none to apply.
   */
  async applyRevision(apiId: string, revisionId?: string): Promise<boolean> {
    const outcome = await this.deps.orm.em.fork().transactional(async (tem) => {
      const api = await tem.findOne(Api, { id: apiId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const revision = api
        ? await tem.findOne(ApiRevision, { api: apiId, status: 'open', ...(revisionId ? { id: revisionId } : {}) })
        : null;
      if (!api || !revision) return null;
      const current = await endpointsOf(tem, api.id);
      const applied = await this.writer.apply(
        tem,
        api,
        current,
        revision.changes,
        api.status === 'live' ? 'live' : 'draft',
      );
      revision.status = 'published';
      revision.publishedAt = this.deps.clock.now();
      await tem.flush();
      return { api, applied };
    });
    if (!outcome) return false;
    await this.writer.announce(outcome.api, outcome.applied);
    return true;
  }

  /** Activity: remove an endpoint at its announced sunset (no-op if the removal was withdrawn or already done). */
  async removeAtSunset(input: { apiId: string; endpointId: string; sunsetAt: string }): Promise<boolean> {
    const outcome = await this.deps.orm.em.fork().transactional(async (tem) => {
      const api = await tem.findOne(Api, { id: input.apiId });
      const keys = api ? await this.writer.removeAtSunset(tem, input.endpointId, new Date(input.sunsetAt)) : null;
      return api && keys ? { api, keys } : null;
    });
    if (!outcome) return false;
    await this.writer.announce(outcome.api, { toolKeys: outcome.keys });
    return true;
  }
}
