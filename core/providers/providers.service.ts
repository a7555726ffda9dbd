/**
 * Provider listings: create or import, read, change metadata, set the upstream credential, price endpoints
 * (decreases now; increases on live listings after a notice period, by priceChangeWorkflow), and the lifecycle
 * (verify, publish, unpublish) through verifyAndPublishWorkflow. Everything is scoped to the caller's org: another
 * org's listing answers 404. Every change the gateway caches (status, prices, discounts, upstream) is announced to the
 * gateways once it commits (core/spend/gateway-events.ts).
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { Api, Category, Endpoint, Org, type Discount, type IApi, type IEndpoint } from '../../db/entities/index.js';
import type { Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError, ConflictError, NotFoundError, ValidationError } from '../errors.js';
import type { GatewayEvents } from '../spend/gateway-events.js';
import { isId, newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { pageInfo, type Page } from '../pagination.js';
import { effectivePrice, type EffectivePrice } from '../pricing/effective-price.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { PublishResult, VerificationResult } from '../temporal/contracts.js';
import type { TemporalService } from '../temporal/temporal.service.js';
import { applyCredential, redactUrl, type UpstreamCredential } from '../upstream/credentials.js';
import { ensurePublicIdentity } from '../profiles/public-identity.js';
import { UpstreamRequestError, type UpstreamGuard } from '../upstream/upstream-guard.js';
import { parseOpenApiDocument, type ImportedEndpoint } from './openapi-import.js';
import type {
  CreateApiBody,
  CredentialsBody,
  DiscountInput,
  EndpointInput,
  PricingBody,
  PublishBody,
  UpdateApiBody,
} from './providers.schemas.js';

export const IMPORT_LIMITS = { maxBytes: 5 * 1024 * 1024, timeoutMs: 10_000, maxRedirects: 3 } as const;
export const SMOKE_LIMITS = { maxBytes: 1024 * 1024, timeoutMs: 10_000, maxRedirects: 3, maxChecks: 10 } as const;

export interface EndpointView {
  endpoint_id: string;
  method: string;
  path: string;
  summary: string | null;
  operation_id: string | null;
  price_cents: number;
  price_cents_effective: number;
  price_increase: EffectivePrice['price_increase'];
  discount: EffectivePrice['discount'] | Discount | null;
  input_schema: Record<string, unknown> | null;
  output_schema: Record<string, unknown> | null;
}

export interface ProviderApiSummary {
  api_id: string;
  name: string;
  slug: string;
  summary: string;
  status: 'draft' | 'live';
  endpoint_count: number;
  verification_status: string;
  published_at: string | null;
  updated_at: string;
}

export interface CredentialView {
  set: boolean;
  injection: string | null;
  injection_name: string | null;
  updated_at: string | null;
}

export interface ProviderApiView extends Omit<ProviderApiSummary, 'endpoint_count'> {
  description: string | null;
  tags: string[];
  category: string | null;
  examples: string[];
  source: IApi['source'];
  base_url: string;
  docs_url: string | null;
  import_source: IApi['importSource'];
  credential: CredentialView;
  verification: { status: string; result: IApi['verification'] };
  listing_url: string;
  gateway_url: string;
  created_at: string;
  endpoints: EndpointView[];
}

export type LifecycleOutcome =
  { done: true; result: PublishResult } | { done: false; workflow_id: string; run_id: string; status: 'running' };

/**
 * What a lifecycle step (verify, publish, unpublish) answers, over REST and as a tool: the finished run's result, or,
 * when the run outlasts the bounded wait, the running workflow (REST says 202; the listing's status shows the end).
 */
export type LifecycleView = { api_id: string } & (
  PublishResult | { done: false; workflow_id: string; run_id: string; status: 'running' }
);

export function lifecycleView(apiId: string, outcome: LifecycleOutcome): LifecycleView {
  return outcome.done ? { api_id: apiId, ...outcome.result } : { api_id: apiId, ...outcome };
}

export interface ProvidersDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  guard: UpstreamGuard;
  secrets: SecretBox;
  temporal: TemporalService;
  /** Tells the gateways a listing changed (after the change commits). */
  events: GatewayEvents;
  logger: Logger;
  /** Catalog search's index (core/catalog/search/search-index.ts): refreshed on publish and on edits. */
  searchIndex?: { index(apiIds: readonly string[]): Promise<number> };
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

function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}

/** What a provider trying a local upstream needs to know (issue 22): the switch exists, for development only. */
export const PRIVATE_UPSTREAM_HINT =
  'For local development, start the marketplace with UPSTREAM_ALLOW_PRIVATE=true to allow loopback and private ' +
  'addresses and plain http (never in production).';

/** Re-throw a guard refusal as a 400 that names the field (and, for a private address, the development switch). */
function forField(field: string, err: unknown): never {
  if (err instanceof UpstreamRequestError) {
    const local = err.reason === 'blocked_address' || err.reason === 'unsupported_scheme';
    throw new ValidationError(`${field}: ${err.message}${local ? ` ${PRIVATE_UPSTREAM_HINT}` : ''}`, {
      details: { field, reason: err.reason, ...(local ? { hint: PRIVATE_UPSTREAM_HINT } : {}) },
    });
  }
  throw err;
}

export class ProvidersService {
  constructor(private readonly deps: ProvidersDeps) {}

  // ---- views --------------------------------------------------------------------------------------------------

  endpointView(e: IEndpoint, now = this.deps.clock.now()): EndpointView {
    const price = effectivePrice(e, now);
    return {
      endpoint_id: e.id,
      method: e.method,
      path: e.path,
      summary: e.summary ?? null,
      operation_id: e.operationId ?? null,
      price_cents: price.price_cents,
      price_cents_effective: price.price_cents_effective,
      price_increase: price.price_increase,
      discount: price.discount ?? e.discount ?? null,
      input_schema: e.inputSchema ?? null,
      output_schema: e.outputSchema ?? null,
    };
  }

  private summaryView(api: IApi, endpointCount: number): ProviderApiSummary {
    return {
      api_id: api.id,
      name: api.name,
      slug: api.slug,
      summary: api.summary,
      status: api.status,
      endpoint_count: endpointCount,
      verification_status: api.verificationStatus,
      published_at: iso(api.publishedAt),
      updated_at: api.updatedAt.toISOString(),
    };
  }

  private view(api: IApi, endpoints: IEndpoint[]): ProviderApiView {
    const { urls } = this.deps.config;
    const { endpoint_count: _count, ...summary } = this.summaryView(api, endpoints.length);
    return {
      ...summary,
      description: api.description ?? null,
      tags: [...api.tags],
      category: api.category ?? null,
      examples: [...api.examples],
      source: api.source,
      base_url: api.baseUrl,
      docs_url: api.docsUrl ?? null,
      import_source: api.importSource ?? null,
      credential: {
        set: api.injection != null,
        injection: api.injection ?? null,
        injection_name: api.injectionName ?? null,
        updated_at: iso(api.credentialUpdatedAt),
      },
      verification: { status: api.verificationStatus, result: api.verification ?? null },
      listing_url: `${urls.publicBase}/v1/apis/${api.slug}`,
      gateway_url: `${urls.gateway}/v1/proxy/${api.slug}`,
      created_at: api.createdAt.toISOString(),
      endpoints: endpoints.map((e) => this.endpointView(e)),
    };
  }

  private async endpointsOf(em: EntityManager, apiId: string): Promise<IEndpoint[]> {
    return em.find(Endpoint, { api: apiId }, { orderBy: { position: 'asc', id: 'asc' } });
  }

  /** The caller's listing, or 404. */
  private async own(em: EntityManager, principal: Principal, apiId: string): Promise<IApi> {
    const api = isId('api', apiId) ? await em.findOne(Api, { id: apiId, org: principal.orgId }) : null;
    if (!api) throw new NotFoundError(`No API ${apiId}.`);
    return api;
  }

  // ---- listings -----------------------------------------------------------------------------------------------

  async list(principal: Principal, page: { limit: number; offset: number }): Promise<Page<ProviderApiSummary>> {
    const em = this.deps.orm.em.fork();
    const [apis, total] = await em.findAndCount(
      Api,
      { org: principal.orgId },
      { orderBy: { createdAt: 'asc', id: 'asc' }, limit: page.limit, offset: page.offset },
    );
    const counts = new Map<string, number>();
    if (apis.length) {
      const rows = await em.execute<{ api_id: string; n: string }[]>(
        `select api_id, count(*) as n from endpoints where api_id in (${apis.map(() => '?').join(',')}) group by api_id`,
        apis.map((a) => a.id),
      );
      for (const r of rows) counts.set(r.api_id, Number(r.n));
    }
    return {
      items: apis.map((a) => this.summaryView(a, counts.get(a.id) ?? 0)),
      pagination: pageInfo(page.limit, page.offset, apis.length, total),
    };
  }

  async get(principal: Principal, apiId: string): Promise<ProviderApiView> {
    const em = this.deps.orm.em.fork();
    const api = await this.own(em, principal, apiId);
    return this.view(api, await this.endpointsOf(em, api.id));
  }

  async create(principal: Principal, body: CreateApiBody): Promise<ProviderApiView> {
    const { guard } = this.deps;
    const baseUrl = await guard.checkUrl(body.base_url).catch((err: unknown) => forField('base_url', err));
    if (baseUrl.search || baseUrl.hash) throw new ValidationError('base_url: must not carry a query or fragment.');

    let imported: ImportedEndpoint[] = [];
    let importSource: IApi['importSource'] = null;
    let docsUrl: string | null = null;
    if (body.import_from) {
      const field = 'import_from.url';
      const source = await guard.checkUrl(body.import_from.url).catch((err: unknown) => forField(field, err));
      const now = this.deps.clock.now().toISOString();
      if (body.import_from.type === 'external_url') {
        docsUrl = source.toString();
        importSource = { type: 'external_url', url: docsUrl, imported_at: now };
      } else {
        const res = await guard
          .fetch(source.toString(), {
            ...IMPORT_LIMITS,
            headers: { accept: 'application/json, application/yaml, text/yaml;q=0.9, */*;q=0.5' },
          })
          .catch((err: unknown) => forField(field, err));
        if (res.status < 200 || res.status > 299) {
          throw new ValidationError(`${field}: the document could not be fetched (HTTP ${res.status}).`, {
            details: { field, upstream_status: res.status },
          });
        }
        const doc = await parseOpenApiDocument(res.body.toString('utf8'));
        imported = doc.endpoints;
        importSource = {
          type: 'openapi_url',
          url: source.toString(),
          imported_at: now,
          openapi_version: doc.openapi_version,
          operations: doc.endpoints.length,
        };
      }
    }

    if (body.category != null) await assertCategory(this.deps.orm.em.fork(), body.category);
    if (body.docs_url != null) docsUrl = checkDocsUrl(body.docs_url);
    const endpoints = mergeEndpoints(imported, body.endpoints ?? []);
    if (endpoints.length > 500) throw new ValidationError('A listing can have at most 500 endpoints.');
    // The provider gets a public name and slug with its first listing (issue 22), before the listing exists.
    await ensurePublicIdentity(this.deps.orm, principal.orgId, body.name);
    try {
      return await this.deps.orm.em.fork().transactional(async (tem) => {
        const api = tem.create(Api, {
          id: newId('api'),
          org: tem.getReference(Org, principal.orgId),
          name: body.name,
          slug: body.slug,
          summary: body.summary,
          description: body.description ?? null,
          tags: body.tags ?? [],
          category: body.category ?? null,
          examples: body.examples ?? [],
          baseUrl: baseUrl.toString().replace(/\/$/, baseUrl.pathname === '/' ? '' : '/'),
          docsUrl,
          importSource,
        });
        const rows = endpoints.map((e, position) =>
          tem.create(Endpoint, {
            id: newId('endpoint'),
            api,
            method: e.method,
            path: e.path,
            summary: e.summary ?? null,
            operationId: e.operation_id ?? null,
            inputSchema: e.input_schema ?? null,
            outputSchema: e.output_schema ?? null,
            priceCents: e.price_cents ?? 0,
            position,
          }),
        );
        await tem.flush();
        return this.view(api, rows);
      });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) {
        throw new ConflictError(`The slug "${body.slug}" is taken.`, { details: { field: 'slug' } });
      }
      throw err;
    }
  }

  async update(principal: Principal, apiId: string, body: UpdateApiBody): Promise<ProviderApiView> {
    const em = this.deps.orm.em.fork();
    const api = await this.own(em, principal, apiId);
    if (body.base_url !== undefined) {
      const url = await this.deps.guard.checkUrl(body.base_url).catch((err: unknown) => forField('base_url', err));
      if (url.search || url.hash) throw new ValidationError('base_url: must not carry a query or fragment.');
      if (url.toString() !== api.baseUrl) {
        api.baseUrl = url.toString();
        // A new upstream has not been verified.
        api.verificationStatus = 'never';
        api.verification = null;
      }
    }
    if (body.docs_url !== undefined) api.docsUrl = body.docs_url === null ? null : checkDocsUrl(body.docs_url);
    if (body.name !== undefined) api.name = body.name;
    if (body.summary !== undefined) api.summary = body.summary;
    if (body.description !== undefined) api.description = body.description;
    if (body.tags !== undefined) api.tags = body.tags;
    if (body.category != null) await assertCategory(em, body.category);
    if (body.category !== undefined) api.category = body.category;
    if (body.examples !== undefined) api.examples = body.examples;
    await em.flush();
    await this.deps.events.listingChanged(api.slug);
    await this.deps.searchIndex?.index([api.id]).catch((err: unknown) => {
      // The edit is saved; the listing keeps its previous index row until the next edit or publish.
      this.deps.logger.warn({ api_id: api.id, err }, 'search index refresh failed');
    });
    return this.view(api, await this.endpointsOf(em, api.id));
  }

  async setCredentials(principal: Principal, apiId: string, body: CredentialsBody): Promise<CredentialView> {
    const em = this.deps.orm.em.fork();
    const api = await this.own(em, principal, apiId);
    api.credentialCiphertext = this.deps.secrets.seal(body.secret);
    api.injection = body.injection;
    api.injectionName = body.injection === 'header' || body.injection === 'query' ? body.injection_name! : null;
    api.credentialUpdatedAt = this.deps.clock.now();
    await em.flush();
    await this.deps.events.listingChanged(api.slug);
    return {
      set: true,
      injection: api.injection,
      injection_name: api.injectionName ?? null,
      updated_at: iso(api.credentialUpdatedAt),
    };
  }

  /** The decrypted credential (server side only: the smoke test and the gateway). */
  async credentialOf(em: EntityManager, api: IApi): Promise<UpstreamCredential | null> {
    if (!api.injection) return null;
    const [row] = await em.execute<{ credential_ciphertext: string | null }[]>(
      'select credential_ciphertext from apis where id = ?',
      [api.id],
    );
    if (!row?.credential_ciphertext) return null;
    return {
      secret: this.deps.secrets.open(row.credential_ciphertext),
      injection: api.injection,
      injectionName: api.injectionName ?? null,
    };
  }

  // ---- lifecycle ----------------------------------------------------------------------------------------------

  async verify(principal: Principal, apiId: string): Promise<LifecycleOutcome> {
    const em = this.deps.orm.em.fork();
    const api = await this.own(em, principal, apiId);
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
    const api = await this.own(em, principal, apiId);
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
    const api = await this.own(em, principal, apiId);
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
    const endpoints = await this.endpointsOf(em, api.id);
    const credential = await this.credentialOf(em, api);
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

  // ---- pricing ------------------------------------------------------------------------------------------------

  async updatePricing(principal: Principal, apiId: string, body: PricingBody): Promise<{ endpoints: EndpointView[] }> {
    const { temporal, clock, config } = this.deps;
    const { slug, view } = await this.deps.orm.em.fork().transactional(async (tem) => {
      const api = await this.own(tem, principal, apiId);
      const all = await this.endpointsOf(tem, api.id);
      const byId = new Map(all.map((e) => [e.id, e]));
      const missing = body.endpoints.filter((e) => !byId.has(e.endpoint_id)).map((e) => e.endpoint_id);
      if (missing.length)
        throw new NotFoundError(`No endpoint ${missing.join(', ')} on this API.`, {
          details: { endpoint_ids: missing },
        });
      const now = clock.now();
      const toSchedule: { endpoint: IEndpoint; priceCents: number; effectiveAt: Date }[] = [];
      const toCancel: IEndpoint[] = [];
      for (const change of body.endpoints) {
        const endpoint = byId.get(change.endpoint_id)!;
        // A scheduled price whose time has come is the current price.
        if (
          endpoint.pendingPriceCents != null &&
          endpoint.pendingPriceEffectiveAt &&
          endpoint.pendingPriceEffectiveAt <= now
        ) {
          endpoint.priceCents = endpoint.pendingPriceCents;
          endpoint.pendingPriceCents = null;
          endpoint.pendingPriceEffectiveAt = null;
        }
        if (change.discount !== undefined) endpoint.discount = change.discount ? toDiscount(change.discount) : null;
        if (change.price_cents === undefined) continue;
        const hadPending = endpoint.pendingPriceCents != null;
        if (api.status === 'draft' || change.price_cents <= endpoint.priceCents) {
          endpoint.priceCents = change.price_cents;
          endpoint.pendingPriceCents = null;
          endpoint.pendingPriceEffectiveAt = null;
          if (hadPending) toCancel.push(endpoint);
        } else {
          const effectiveAt = new Date(now.getTime() + config.providers.priceIncreaseNoticeMs);
          endpoint.pendingPriceCents = change.price_cents;
          endpoint.pendingPriceEffectiveAt = effectiveAt;
          toSchedule.push({ endpoint, priceCents: change.price_cents, effectiveAt });
        }
      }
      await tem.flush();
      // Inside the transaction: if Temporal cannot take the schedule, nothing changes and the caller may retry. A run
      // left behind by a rollback finds no matching pending change and applies nothing.
      for (const s of toSchedule) {
        await temporal.schedulePriceChange(
          {
            apiId: api.id,
            endpointId: s.endpoint.id,
            priceCents: s.priceCents,
            effectiveAt: s.effectiveAt.toISOString(),
          },
          { apiSlug: api.slug, orgId: api.org.id },
        );
      }
      for (const e of toCancel) await temporal.cancelPriceChange(api.id, e.id);
      return {
        slug: api.slug,
        view: { endpoints: body.endpoints.map((c) => this.endpointView(byId.get(c.endpoint_id)!, now)) },
      };
    });
    // Committed: every gateway drops the listing (a decrease or a discount applies to the next call).
    await this.deps.events.listingChanged(slug);
    return view;
  }

  async cancelPendingPrice(principal: Principal, apiId: string, endpointId: string): Promise<EndpointView> {
    const { slug, view } = await this.deps.orm.em.fork().transactional(async (tem) => {
      const api = await this.own(tem, principal, apiId);
      const endpoint = isId('endpoint', endpointId)
        ? await tem.findOne(Endpoint, { id: endpointId, api: api.id })
        : null;
      if (!endpoint) throw new NotFoundError(`No endpoint ${endpointId} on this API.`);
      const now = this.deps.clock.now();
      if (
        endpoint.pendingPriceCents == null ||
        !endpoint.pendingPriceEffectiveAt ||
        endpoint.pendingPriceEffectiveAt <= now
      ) {
        throw new NotFoundError('This endpoint has no scheduled price increase to cancel.');
      }
      endpoint.pendingPriceCents = null;
      endpoint.pendingPriceEffectiveAt = null;
      await tem.flush();
      await this.deps.temporal.cancelPriceChange(api.id, endpoint.id);
      return { slug: api.slug, view: this.endpointView(endpoint, now) };
    });
    await this.deps.events.listingChanged(slug);
    return view;
  }

  /** Activity: apply a scheduled price if the endpoint still carries exactly this pending change. */
  async applyScheduledPrice(input: { endpointId: string; priceCents: number; effectiveAt: string }): Promise<boolean> {
    const rows = await this.deps.orm.em.fork().execute<{ slug: string }[]>(
      `update endpoints set price_cents = pending_price_cents, pending_price_cents = null,
              pending_price_effective_at = null, updated_at = now()
        where id = ? and pending_price_cents = ? and pending_price_effective_at = ?
        returning (select slug from apis where apis.id = endpoints.api_id) as slug`,
      [input.endpointId, input.priceCents, new Date(input.effectiveAt)],
    );
    if (rows[0]) await this.deps.events.listingChanged(rows[0].slug);
    return rows.length === 1;
  }
}

/**
 * A documentation link is shown to people and agents, never fetched by the service, so it needs no SSRF check (and
 * no DNS lookup): an absolute http(s) URL without credentials.
 */
function checkDocsUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError('docs_url: must be an absolute http or https URL.', { details: { field: 'docs_url' } });
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) {
    throw new ValidationError('docs_url: must be an http or https URL without credentials.', {
      details: { field: 'docs_url' },
    });
  }
  return url.toString();
}

/** A listing's category must be a slug of the taxonomy (400 otherwise, saying where the valid ones are). */
async function assertCategory(em: EntityManager, slug: string): Promise<void> {
  if ((await em.count(Category, { slug })) > 0) return;
  throw new ValidationError(
    `category: "${slug}" is not a category slug; GET /v1/categories lists the valid ones (send null for none).`,
    { details: { field: 'category', categories_url: '/v1/categories' } },
  );
}

function toDiscount(d: DiscountInput): Discount {
  return {
    ...(d.percent !== undefined ? { percent: d.percent } : { amount_cents: d.amount_cents }),
    starts_at: d.starts_at ?? null,
    ends_at: d.ends_at ?? null,
    label: d.label ?? null,
  };
}

type MergedEndpoint = Omit<EndpointInput, 'summary'> & { summary?: string | null; operation_id?: string | null };

/** Imported operations, overlaid by inline endpoints of the same method and path (inline wins), plus new ones. */
function mergeEndpoints(imported: ImportedEndpoint[], inline: EndpointInput[]): MergedEndpoint[] {
  const merged = new Map<string, MergedEndpoint>();
  for (const e of imported) merged.set(`${e.method} ${e.path}`, { ...e, price_cents: 0 });
  for (const e of inline) {
    const key = `${e.method} ${e.path}`;
    const prev = merged.get(key);
    merged.set(
      key,
      prev ? { ...prev, ...Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)) } : e,
    );
  }
  return [...merged.values()];
}
