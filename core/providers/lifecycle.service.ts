/**
 * A listing's lifecycle: verify (the upstream smoke test), publish and unpublish, each run by verifyAndPublishWorkflow
 * with a bounded wait; the workflow's activities (the smoke test, the status flip) are here too. Publishing needs the
 * provider terms accepted and at least one endpoint; a failed smoke test keeps the listing a draft.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Api, Endpoint, type IApi, type IEndpoint } from '../../db/entities/index.js';
import type { Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { endpointsOf, ownApi } from '../db/owned-api.js';
import { AppError, NotFoundError, ValidationError } from '../errors.js';
import type { Logger } from '../logger.js';
import { ensurePublicIdentity } from '../profiles/public-identity.js';
import type { GatewayEvents } from '../spend/gateway-events.js';
import type { PublishResult, VerificationResult } from '../temporal/contracts.js';
import type { TemporalService } from '../temporal/temporal.service.js';
import { applyCredential, redactUrl } from '../upstream/credentials.js';
import { UpstreamRequestError, type UpstreamGuard } from '../upstream/upstream-guard.js';
import type { ProviderCredentialsService } from './credentials.service.js';
import type { LifecycleView, PublishBody } from './providers.schemas.js';

export const SMOKE_LIMITS = { maxBytes: 1024 * 1024, timeoutMs: 10_000, maxRedirects: 3, maxChecks: 10 } as const;

export type LifecycleOutcome =
  { done: true; result: PublishResult } | { done: false; workflow_id: string; run_id: string; status: 'running' };

export type { LifecycleView } from './providers.schemas.js';

/**
 * What a lifecycle step (verify, publish, unpublish) answers, over REST and as a tool: the finished run's result, or,
 * when the run outlasts the bounded wait, the running workflow (REST says 202; the listing's status shows the end).
 */
export function lifecycleView(apiId: string, outcome: LifecycleOutcome): LifecycleView {
  return outcome.done ? { api_id: apiId, ...outcome.result } : { api_id: apiId, ...outcome };
}

/** `https://host/base` + `/forecast/{city}` with values for the parameters. */
export function upstreamUrl(baseUrl: string, path: string, params: Record<string, string> = {}): URL {
  const base = new URL(baseUrl);
  const filled = path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) =>
    encodeURIComponent(params[name] ?? name),
  );
  const url = new URL(base.toString());
  url.pathname = `${base.pathname.replace(/\/+$/, '')}${filled}`;
  url.search = '';
  url.hash = '';
  return url;
}

/** Example values for a path's parameters from the endpoint's input schema (example, default, first enum value). */
function exampleParams(endpoint: IEndpoint): Record<string, string> {
  const props = (
    (endpoint.inputSchema?.properties as Record<string, unknown> | undefined)?.path as
      { properties?: Record<string, Record<string, unknown>> } | undefined
  )?.properties;
  const out: Record<string, string> = {};
  for (const [name, schema] of Object.entries(props ?? {})) {
    const value: unknown =
      schema.example ?? schema.default ?? (Array.isArray(schema.enum) ? (schema.enum as unknown[])[0] : undefined);
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[name] = String(value);
  }
  return out;
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
  searchIndex?: { index(apiIds: readonly string[]): Promise<number> };
}

export class ProviderLifecycleService {
  constructor(private readonly deps: LifecycleDeps) {}

  async verify(principal: Principal, apiId: string): Promise<LifecycleOutcome> {
    const em = this.deps.orm.em.fork();
    const api = await ownApi(em, principal, apiId);
    if ((await em.count(Endpoint, { api: api.id })) === 0) {
      throw new ValidationError('Add at least one endpoint before verifying.');
    }
    const outcome = await this.runLifecycle(api, 'verify', false);
    if (!outcome.done) return outcome;
    // Verifying never changes the status: report the listing's own (a live listing stays live).
    const now = await this.deps.orm.em.fork().findOneOrFail(Api, api.id);
    return { done: true, result: { ...outcome.result, status: now.status } };
  }

  async publish(principal: Principal, apiId: string, body: PublishBody): Promise<LifecycleOutcome> {
    if (!body.acceptTerms) {
      throw new ValidationError('Publishing requires accepting the provider terms: send "accept_terms": true.', {
        details: { field: 'accept_terms' },
      });
    }
    const em = this.deps.orm.em.fork();
    const api = await ownApi(em, principal, apiId);
    if ((await em.count(Endpoint, { api: api.id })) === 0) {
      throw new ValidationError('Add at least one endpoint before publishing.');
    }
    if (api.status === 'live')
      return { done: true, result: { action: 'publish', status: 'live', verification: api.verification ?? null } };
    // Listings made before every provider had one (issue 22) get their public name and slug at publish.
    await ensurePublicIdentity(this.deps.orm, principal.orgId, api.name);
    const outcome = await this.runLifecycle(api, 'publish', body.skipVerify);
    if (outcome.done && outcome.result.status !== 'live') {
      throw new AppError('verification_failed', 'The upstream smoke test failed, so the API was not published.', {
        details: { verification: outcome.result.verification },
      });
    }
    return outcome;
  }

  async unpublish(principal: Principal, apiId: string): Promise<LifecycleOutcome> {
    const em = this.deps.orm.em.fork();
    const api = await ownApi(em, principal, apiId);
    if (api.status === 'draft')
      return { done: true, result: { action: 'unpublish', status: 'draft', verification: null } };
    return this.runLifecycle(api, 'unpublish', false);
  }

  private async runLifecycle(api: IApi, action: 'verify' | 'publish' | 'unpublish', skipVerify: boolean) {
    return this.deps.temporal.runPublish(
      { apiId: api.id, action, skipVerify },
      this.deps.config.providers.publishWaitMs,
      { apiSlug: api.slug, orgId: api.org.id },
    );
  }

  /** Activity: call the upstream like a consumer would, store the evidence on the listing, and return it. */
  async smokeTest(apiId: string): Promise<VerificationResult> {
    const em = this.deps.orm.em.fork();
    const api = await em.findOne(Api, { id: apiId });
    if (!api) throw new NotFoundError(`No API ${apiId}.`);
    const endpoints = await endpointsOf(em, api.id);
    const credential = await this.deps.credentials.credentialOf(em, api);
    const simple = endpoints.filter((e) => e.method === 'GET' && !e.path.includes('{'));
    const targets = (simple.length ? simple : endpoints.slice(0, 1)).slice(0, SMOKE_LIMITS.maxChecks);
    const checks: VerificationResult['checks'] = [];
    for (const endpoint of targets) {
      const url = upstreamUrl(api.baseUrl, endpoint.path, exampleParams(endpoint));
      const headers = {
        accept: 'application/json, */*;q=0.5',
        'user-agent': 'svc-marketplace-verify/1',
        ...(credential ? applyCredential(url, credential) : {}),
      };
      const started = performance.now();
      try {
        const res = await this.deps.guard.fetch(url.toString(), { ...SMOKE_LIMITS, method: endpoint.method, headers });
        const ok = res.status >= 200 && res.status <= 299;
        checks.push({
          endpoint_id: endpoint.id,
          method: endpoint.method,
          path: endpoint.path,
          status: res.status,
          latency_ms: Math.round(performance.now() - started),
          ok,
          error: ok ? null : `upstream answered HTTP ${res.status}`,
        });
      } catch (err) {
        const reason = err instanceof UpstreamRequestError ? `${err.reason}: ${err.message}` : 'request failed';
        this.deps.logger.info({ api_id: api.id, url: redactUrl(url, credential), reason }, 'smoke test call failed');
        checks.push({
          endpoint_id: endpoint.id,
          method: endpoint.method,
          path: endpoint.path,
          status: null,
          latency_ms: null,
          ok: false,
          error: reason,
        });
      }
    }
    const result: VerificationResult = {
      checked_at: this.deps.clock.now().toISOString(),
      passed: checks.length > 0 && checks.every((c) => c.ok),
      checks,
    };
    api.verification = result;
    api.verificationStatus = result.passed ? 'passed' : 'failed';
    await em.flush();
    return result;
  }

  /** Activity: flip the listing's status (idempotent). */
  async setStatus(apiId: string, status: 'live' | 'draft'): Promise<void> {
    const em = this.deps.orm.em.fork();
    const api = await em.findOne(Api, { id: apiId });
    if (!api) throw new NotFoundError(`No API ${apiId}.`);
    // Index before going live (idempotent): a retried activity cannot leave a live listing unsearchable.
    if (status === 'live') await this.deps.searchIndex?.index([api.id]);
    if (api.status === status) return;
    api.status = status;
    if (status === 'live') api.publishedAt = this.deps.clock.now();
    await em.flush();
    await this.deps.events.listingChanged(api.slug);
  }
}
