/**
 * Provider listings: create or import (an OpenAPI document, or a link to external docs), read, change metadata.
 * Everything is scoped to the caller's org: another org's listing answers 404. An edit the gateway caches is announced
 * to the gateways once it commits (core/spend/gateway-events.ts). The rest of a listing's life has its own module:
 * the upstream credential (credentials.service.ts), verify and publish (lifecycle.service.ts), prices
 * (core/pricing/price-changes.service.ts).
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { Api, ApiRevision, Category, Endpoint, Org, type IApi, type IEndpoint } from '../../db/entities/index.js';
import type { Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { assertNotArchived, endpointsOf, ownApi } from '../db/owned-api.js';
import { ConflictError, ValidationError } from '../errors.js';
import type { GatewayEvents } from '../spend/gateway-events.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { pageInfo, type Page } from '../pagination.js';
import { ensurePublicIdentity } from '../profiles/public-identity.js';
import type { UpstreamGuard } from '../upstream/upstream-guard.js';
import { listingView, summaryView, type ProviderApiSummary, type ProviderApiView } from './listing-views.js';
import type { ImportedApi, ImportedEndpoint } from './openapi-import.js';
import { fetchOpenApi, forField } from './openapi-fetch.js';
import type { CreateApiBody, EndpointInput, UpdateApiBody } from './providers.schemas.js';

export { IMPORT_LIMITS, PRIVATE_UPSTREAM_HINT } from './openapi-fetch.js';

export interface ProvidersDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  guard: UpstreamGuard;
  /** Tells the gateways a listing changed (after the change commits). */
  events: GatewayEvents;
  logger: Logger;
  /** Catalog search's index (core/catalog/search/search-index.ts): refreshed on edits. */
  searchIndex?: { index(apiIds: readonly string[]): Promise<number> };
}

export class ProvidersService {
  constructor(private readonly deps: ProvidersDeps) {}

  private async view(em: EntityManager, api: IApi, endpoints?: IEndpoint[]): Promise<ProviderApiView> {
    const [rows, revision] = await Promise.all([
      endpoints ?? endpointsOf(em, api.id),
      api.status === 'live' ? em.findOne(ApiRevision, { api: api.id, status: 'open' }) : null,
    ]);
    return listingView(api, rows, this.deps.config.urls, this.deps.clock.now(), revision);
  }

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
      items: apis.map((a) => summaryView(a, counts.get(a.id) ?? 0)),
      pagination: pageInfo(page.limit, page.offset, apis.length, total),
    };
  }

  async get(principal: Principal, apiId: string): Promise<ProviderApiView> {
    const em = this.deps.orm.em.fork();
    return this.view(em, await ownApi(em, principal, apiId));
  }

  async create(principal: Principal, body: CreateApiBody): Promise<ProviderApiView> {
    const { guard } = this.deps;
    const baseUrl = await guard.checkUrl(body.base_url).catch((err: unknown) => forField('base_url', err));
    if (baseUrl.search || baseUrl.hash) throw new ValidationError('base_url: must not carry a query or fragment.');

    const { imported, importSource, docsUrl: importedDocs } = await this.importFrom(body.import_from);
    let docsUrl = importedDocs;

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
        return this.view(tem, api, rows);
      });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) {
        throw new ConflictError(`The slug "${body.slug}" is taken.`, { details: { field: 'slug' } });
      }
      throw err;
    }
  }

  /** The listing's import: an OpenAPI document fetched (through the SSRF guard) and parsed, or a docs link. */
  private async importFrom(from: CreateApiBody['import_from']): Promise<{
    imported: ImportedEndpoint[];
    importSource: IApi['importSource'];
    docsUrl: string | null;
  }> {
    const { guard } = this.deps;
    let imported: ImportedEndpoint[] = [];
    let importSource: IApi['importSource'] = null;
    let docsUrl: string | null = null;
    if (!from) return { imported, importSource, docsUrl };
    const field = 'import_from.url';
    const now = this.deps.clock.now().toISOString();
    if (from.type === 'external_url') {
      const source = await guard.checkUrl(from.url).catch((err: unknown) => forField(field, err));
      docsUrl = source.toString();
      importSource = { type: 'external_url', url: docsUrl, imported_at: now };
    } else {
      const { url, doc } = await fetchOpenApi(guard, from.url, field);
      imported = doc.endpoints;
      importSource = openApiSource(url, doc, now);
    }
    return { imported, importSource, docsUrl };
  }

  async update(principal: Principal, apiId: string, body: UpdateApiBody): Promise<ProviderApiView> {
    const em = this.deps.orm.em.fork();
    const api = await ownApi(em, principal, apiId);
    assertNotArchived(api);
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
    return this.view(em, api);
  }
}

/** Where a listing's endpoints were imported from (the listing's `import_source`). */
export function openApiSource(url: string, doc: ImportedApi, at: string): NonNullable<IApi['importSource']> {
  return {
    type: 'openapi_url',
    url,
    imported_at: at,
    openapi_version: doc.openapi_version,
    operations: doc.endpoints.length,
  };
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
