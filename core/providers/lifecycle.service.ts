/**
 * A listing's lifecycle: verify (the upstream smoke test), publish and unpublish, and a live listing's revision
 * publish, each run by verifyAndPublishWorkflow with a bounded wait; the workflow's activities (the smoke tests, the
 * status flip) are here too. Publishing needs the provider terms accepted and at least one endpoint; a failed smoke
 * test keeps the listing a draft (or the revision open), and its message names the host and port it tried.
 * Archiving, restoring and deleting are retirement.service.ts; the endpoint changes a revision holds,
 * endpoints.service.ts.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Api, ApiRevision, Endpoint, type IApi } from '../../db/entities/index.js';
import type { Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { assertNotArchived, endpointsOf, ownApi } from '../db/owned-api.js';
import { AppError, ConflictError, NotFoundError, ValidationError } from '../errors.js';
import type { Logger } from '../logger.js';
import { ensurePublicIdentity } from '../profiles/public-identity.js';
import type { GatewayEvents } from '../spend/gateway-events.js';
import type { PublishAction, PublishResult, VerificationResult } from '../temporal/contracts.js';
import type { TemporalService } from '../temporal/temporal.service.js';
import type { UpstreamGuard } from '../upstream/upstream-guard.js';
import type { ProviderCredentialsService } from './credentials.service.js';
import { projectUpdate } from './endpoint-plan.js';
import type { LifecycleView, PublishBody } from './providers.schemas.js';
import { chooseTargets, runSmokeTest, verificationMessage, type SmokeTarget } from './smoke-test.js';

export { SMOKE_LIMITS, upstreamUrl } from './smoke-test.js';

export type LifecycleOutcome =
  { done: true; result: PublishResult } | { done: false; workflow_id: string; run_id: string; status: 'running' };

export type { LifecycleView } from './providers.schemas.js';

/** What a finished step says, for a person or an agent (a failed smoke test is headed as failed). */
export function lifecycleMessage(result: PublishResult): string {
  const verdict = result.verification ? `${verificationMessage(result.verification)} ` : '';
  const failed = result.verification && !result.verification.passed;
  switch (result.action) {
    case 'verify':
      return verdict.trim() || 'Verification: nothing to check.';
    case 'publish':
      return failed ? `${verdict}The API was not published.` : `${verdict}Published: the API is live.`.trim();
    case 'unpublish':
      return 'Unpublished: the API is a draft again and out of the catalog; an open revision was applied to it.';
    case 'publish_revision':
      return result.revision_published === false
        ? `${verdict}The revision was not published.`
        : `${verdict}Revision published: its changes are live (removals after their notice).`.trim();
  }
}

/**
 * What a lifecycle step (verify, publish, unpublish) answers, over REST and as a tool: the finished run's result, or,
 * when the run outlasts the bounded wait, the running workflow (REST says 202; the listing's status shows the end).
 */
export function lifecycleView(apiId: string, outcome: LifecycleOutcome): LifecycleView {
  return outcome.done
    ? { api_id: apiId, ...outcome.result, message: lifecycleMessage(outcome.result) }
    : { api_id: apiId, ...outcome };
}

export interface LifecycleDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  guard: UpstreamGuard;
  temporal: TemporalService;
  credentials: ProviderCredentialsService;
  /** Tells the gateways a listing changed (after the change commits). */
  events: GatewayEvents;
  logger: Logger;
  /** Catalog search's index (core/catalog/search/search-index.ts): refreshed on publish. */
  searchIndex?: { index(apiIds: readonly string[]): Promise<number>; changed(): void };
}

export class ProviderLifecycleService {
  constructor(private readonly deps: LifecycleDeps) {}

  async verify(principal: Principal, apiId: string): Promise<LifecycleOutcome> {
    const em = this.deps.orm.em.fork();
    const api = await ownApi(em, principal, apiId);
    assertNotArchived(api);
    if ((await em.count(Endpoint, { api: api.id })) === 0) {
      throw new ValidationError('Add at least one endpoint before verifying.', { details: { field: 'endpoints' } });
    }
    const outcome = await this.runLifecycle(api, 'verify', false);
    if (!outcome.done) return outcome;
    // Verifying never changes the status: report the listing's own (a live listing stays live).
    const now = await this.deps.orm.em.fork().findOneOrFail(Api, api.id);
    return { done: true, result: { ...outcome.result, status: now.status === 'live' ? 'live' : 'draft' } };
  }

  /** Publish a draft, or a live listing's open revision (a live listing without one is left as it is). */
  async publish(principal: Principal, apiId: string, body: PublishBody): Promise<LifecycleOutcome> {
    if (!body.acceptTerms) {
      throw new ValidationError('Publishing requires accepting the provider terms: send "accept_terms": true.', {
        details: { field: 'accept_terms' },
      });
    }
    const em = this.deps.orm.em.fork();
    const api = await ownApi(em, principal, apiId);
    assertNotArchived(api);
    if (api.status === 'live') return this.publishRevision(api, body.skipVerify);
    if ((await em.count(Endpoint, { api: api.id })) === 0) {
      throw new ValidationError('Add at least one endpoint before publishing.', { details: { field: 'endpoints' } });
    }
    // Listings made before every provider had one (issue 22) get their public name and slug at publish.
    await ensurePublicIdentity(this.deps.orm, principal.orgId, api.name);
    const outcome = await this.runLifecycle(api, 'publish', body.skipVerify);
    if (outcome.done && outcome.result.status !== 'live') throw verificationFailed(outcome.result, 'the API');
    return outcome;
  }

  private async publishRevision(api: IApi, skipVerify: boolean): Promise<LifecycleOutcome> {
    const revision = await this.deps.orm.em.fork().findOne(ApiRevision, { api: api.id, status: 'open' });
    if (!revision) {
      return { done: true, result: { action: 'publish', status: 'live', verification: api.verification ?? null } };
    }
    const outcome = await this.runLifecycle(api, 'publish_revision', skipVerify, revision.id);
    if (outcome.done && outcome.result.revision_published === false) {
      if (outcome.result.verification?.passed === false) {
        throw verificationFailed(outcome.result, `revision ${revision.number}`);
      }
      throw new ConflictError(`Revision ${revision.number} was discarded or published while this ran.`);
    }
    return outcome;
  }

  async unpublish(principal: Principal, apiId: string): Promise<LifecycleOutcome> {
    const em = this.deps.orm.em.fork();
    const api = await ownApi(em, principal, apiId);
    if (api.status !== 'live')
      return { done: true, result: { action: 'unpublish', status: 'draft', verification: null } };
    return this.runLifecycle(api, 'unpublish', false);
  }

  private async runLifecycle(api: IApi, action: PublishAction, skipVerify: boolean, revisionId?: string) {
    return this.deps.temporal.runPublish(
      { apiId: api.id, action, skipVerify, ...(revisionId ? { revisionId } : {}) },
      this.deps.config.providers.publishWaitMs,
      { apiSlug: api.slug, orgId: api.org.id },
    );
  }

  /** Activity: call the upstream like a consumer would, store the evidence on the listing, and return it. */
  async smokeTest(apiId: string): Promise<VerificationResult> {
    const em = this.deps.orm.em.fork();
    const api = await em.findOne(Api, { id: apiId });
    if (!api) throw new NotFoundError(`No API ${apiId}.`);
    const targets = (await endpointsOf(em, api.id)).map((e) => ({
      endpoint_id: e.id,
      method: e.method,
      path: e.path,
      input_schema: e.inputSchema ?? null,
    }));
    const result = await this.check(api, chooseTargets(targets));
    api.verification = result;
    api.verificationStatus = result.passed ? 'passed' : 'failed';
    await em.flush();
    return result;
  }

  /**
   * Activity: smoke-test an open revision's new and changed endpoints (as they will be) and store the evidence on
   * the revision. Null when it changes none (removals only) or is no longer open: nothing to check.
   */
  async smokeTestRevision(apiId: string, revisionId: string): Promise<VerificationResult | null> {
    const em = this.deps.orm.em.fork();
    const revision = await em.findOne(ApiRevision, { id: revisionId, api: apiId, status: 'open' });
    const api = revision ? await em.findOne(Api, { id: apiId }) : null;
    if (!revision || !api) return null;
    const current = new Map((await endpointsOf(em, apiId)).map((e) => [e.id, e]));
    const targets: SmokeTarget[] = [
      ...revision.changes.add,
      ...revision.changes.update.flatMap((u) => {
        const e = current.get(u.endpoint_id);
        return e ? [projectUpdate(e, u)] : [];
      }),
    ];
    if (targets.length === 0) return null;
    const result = await this.check(api, chooseTargets(targets));
    revision.verification = result;
    await em.flush();
    return result;
  }

  private async check(api: IApi, targets: SmokeTarget[]): Promise<VerificationResult> {
    const credential = await this.deps.credentials.credentialOf(this.deps.orm.em.fork(), api);
    return runSmokeTest(this.deps, api, credential, targets);
  }

  /** Activity: flip the listing's status (idempotent). */
  async setStatus(apiId: string, status: 'live' | 'draft'): Promise<void> {
    const em = this.deps.orm.em.fork();
    const api = await em.findOne(Api, { id: apiId });
    if (!api) throw new NotFoundError(`No API ${apiId}.`);
    // Index before going live (idempotent): a retried activity cannot leave a live listing unsearchable.
    if (status === 'live') await this.deps.searchIndex?.index([api.id]);
    if (api.status === status || api.status === 'archived') return;
    api.status = status;
    // The latest publication; unpublishing keeps it, so "ever live" is published_at set.
    if (status === 'live') api.publishedAt = this.deps.clock.now();
    await em.flush();
    this.deps.searchIndex?.changed();
    await this.deps.events.listingChanged(api.slug);
  }
}

/** The 422 of a publish whose smoke test failed: headed as failed, naming where (and the evidence in details). */
function verificationFailed(result: PublishResult, what: string): AppError {
  const verdict = result.verification ? verificationMessage(result.verification) : 'Verification failed.';
  return new AppError(
    'verification_failed',
    `${verdict} ${what[0]!.toUpperCase()}${what.slice(1)} was not published.`,
    {
      details: { verification: result.verification },
    },
  );
}
