/**
 * What consumers see of a live listing: the detail (GET /v1/apis/{slug}) and its sub-resources (endpoints, schema,
 * OpenAPI export, stats, score history, ranks, quote), the terms in force, and the category taxonomy. Drafts and
 * unknown slugs are the same 404. Directory listings (`source: 'directory'`) have no endpoints: their sub-resources
 * answer empty lists and an OpenAPI document without paths. Rollup reads (merit, stats, history, ranks) each go
 * through one small reader beside this file (merit.ts, stats.ts, rollup-reads.ts), which documents its table.
 */
import { untilUsageDrained } from '../../spend/usage-barrier.js';
import type { SpendStore } from '../../spend/spend-store.js';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Api, Category, Endpoint, Profile, type IApi, type IEndpoint } from '../../../db/entities/index.js';
import { parseBearer } from '../../auth/bearer.js';
import type { Authenticator } from '../../auth/authenticator.js';
import type { Principal } from '../../auth/scopes.js';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { NotFoundError } from '../../errors.js';
import type { KeysService } from '../../keys/keys.service.js';
import { effectivePrice } from '../../pricing/effective-price.js';
import { endpointHead, removalOf } from '../../pricing/endpoint-view.js';
import type { DocumentsService } from '../../terms/documents.service.js';
import type { TermsStatusView, TermsView } from '../../terms/terms.schemas.js';
import { meritFor } from '../rollups/merit.js';
import { exportOpenApi } from './openapi-export.js';
import { apiArchivedError } from './retired.js';
import { sitemapEntries, type SitemapEntries } from './sitemap.js';
import { listingPage, type ListingPage } from './listing-page.js';
import { quote, type QuoteCaller, type QuoteQuery } from './quote.js';
import { HISTORY_LIMIT, historyFor, ranksFor } from '../rollups/rollup-reads.js';
import { STATS_WINDOWS, statsFor, type StatsWindow } from '../rollups/stats.js';
import type {
  CategoryView,
  EndpointPriceRow,
  ListingDetail,
  ListingOpenApiDocument,
  ListingSchemaView,
  QuoteView,
} from './listings.schemas.js';
import type { HistoryPointView, ListingStats, RankView } from '../rollups/rollups.schemas.js';
export type { CategoryView } from './listings.schemas.js';

export const StatsQuery = z
  .object({
    window: z
      .enum(Object.keys(STATS_WINDOWS) as [StatsWindow, ...StatsWindow[]], {
        error: `must be one of ${Object.keys(STATS_WINDOWS).join(', ')}`,
      })
      .default('24h'),
  })
  .strict();
export const HistoryQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(HISTORY_LIMIT.max).default(HISTORY_LIMIT.default),
  })
  .strict();

/** What a directory entry tells a person (issue 22): it is listed for discovery, not callable through the gateway. */
export const DIRECTORY_ENTRY = {
  note:
    'A directory entry (imported from the public-apis directory): listed so it can be found, not callable through ' +
    'the gateway, and priced by nobody here.',
  how_to_list:
    'Its provider makes it callable by listing it: sign up, then create the API with its base URL and endpoints ' +
    '(console: Provider, or POST /v1/provider/apis), set prices and publish.',
} as const;

export class ListingsService {
  constructor(
    private readonly deps: {
      orm: MikroORM;
      config: Config;
      clock: Clock;
      documents: DocumentsService;
      keys: KeysService;
      authenticator: Authenticator;
      spend: SpendStore;
    },
  ) {}

  /** The live listing, or 410 `api_archived` (retired), or 404 (a draft or an unknown slug). */
  async live(em: EntityManager, slug: string): Promise<IApi> {
    const api = await em.findOne(Api, { slug, status: { $in: ['live', 'archived'] } });
    if (api?.status === 'archived') throw apiArchivedError(api.slug, api.archivedAt ?? null);
    if (!api) throw new NotFoundError(`No live API with slug "${slug}".`);
    return api;
  }

  /** The endpoints a caller can use (one past its announced sunset is gone, even before it is moved out). */
  private async endpointsOf(em: EntityManager, api: IApi): Promise<IEndpoint[]> {
    const now = this.deps.clock.now();
    const rows = await em.find(Endpoint, { api: api.id }, { orderBy: { position: 'asc', id: 'asc' } });
    return rows.filter((e) => !e.sunsetAt || e.sunsetAt > now);
  }

  private priceRow(e: IEndpoint, now: Date): EndpointPriceRow {
    const price = effectivePrice(e, now);
    return {
      ...endpointHead(e),
      price_cents: price.price_cents,
      price_cents_effective: price.price_cents_effective,
      free: price.price_cents_effective === 0,
      price_increase: price.price_increase,
      discount: price.discount,
    };
  }

  private gatewayBase(api: IApi): string {
    return `${this.deps.config.urls.gateway}/v1/proxy/${api.slug}`;
  }

  async detail(slug: string): Promise<ListingDetail> {
    const em = this.deps.orm.em.fork();
    return this.detailOf(em, await this.live(em, slug));
  }

  /** The detail of a listing already read (the storefront's page reads it once: listing-page.ts). */
  async detailOf(em: EntityManager, api: IApi): Promise<ListingDetail> {
    const { clock, documents } = this.deps;
    const [endpoints, profile, docs, category, merits] = await Promise.all([
      this.endpointsOf(em, api),
      em.findOne(Profile, { org: api.org.id }),
      documents.effectiveFor(em, api),
      api.category ? em.findOne(Category, { slug: api.category }) : null,
      meritFor(em, [api.id]),
    ]);
    const now = clock.now();
    const rows = endpoints.map((e) => this.priceRow(e, now));
    const prices = rows.map((r) => r.price_cents_effective);
    const { svc_score, ...merit } = merits.get(api.id)!;
    return {
      slug: api.slug,
      name: api.name,
      summary: api.summary,
      description: api.description ?? null,
      status: 'live',
      source: api.source,
      category: category ? { slug: category.slug, name: category.name } : null,
      tags: [...api.tags],
      examples: [...api.examples],
      provider: { slug: profile?.slug ?? null, name: profile?.displayName ?? null },
      docs_url: api.docsUrl ?? null,
      callable: api.source === 'provider',
      gateway_url: api.source === 'provider' ? this.gatewayBase(api) : null,
      ...(api.source === 'directory' ? { directory_entry: DIRECTORY_ENTRY } : {}),
      published_at: api.publishedAt?.toISOString() ?? null,
      verification: { status: api.verificationStatus, checked_at: api.verification?.checked_at ?? null },
      svc_score,
      merit,
      pricing: {
        endpoints: rows.length,
        free_endpoints: prices.filter((p) => p === 0).length,
        min_price_cents: prices.length ? Math.min(...prices) : 0,
        max_price_cents: prices.length ? Math.max(...prices) : 0,
        free: prices.length > 0 && prices.every((p) => p === 0),
      },
      endpoints: rows,
      terms: {
        required: docs.some((d) => d.acceptanceMode === 'required'),
        documents: docs.map((d) => documents.view(d)),
      },
    };
  }

  async endpoints(slug: string): Promise<EndpointPriceRow[]> {
    const em = this.deps.orm.em.fork();
    const api = await this.live(em, slug);
    const now = this.deps.clock.now();
    return (await this.endpointsOf(em, api)).map((e) => this.priceRow(e, now));
  }

  async schema(slug: string): Promise<ListingSchemaView> {
    const em = this.deps.orm.em.fork();
    return this.schemaOf(em, await this.live(em, slug));
  }

  async schemaOf(em: EntityManager, api: IApi): Promise<ListingSchemaView> {
    const base = this.gatewayBase(api);
    return {
      api: api.slug,
      gateway_url: base,
      endpoints: (await this.endpointsOf(em, api)).map((e) => ({
        endpoint_id: e.id,
        method: e.method,
        path: e.path,
        summary: e.summary ?? null,
        removal: removalOf(e),
        gateway_url: `${base}${e.path}`,
        input_schema: e.inputSchema ?? null,
        output_schema: e.outputSchema ?? null,
      })),
    };
  }

  /** The raw OpenAPI 3.0.3 document (no envelope). */
  async openapi(slug: string): Promise<ListingOpenApiDocument> {
    const em = this.deps.orm.em.fork();
    const api = await this.live(em, slug);
    const endpoints = await this.endpointsOf(em, api);
    const now = this.deps.clock.now();
    return exportOpenApi({
      api,
      endpoints,
      gatewayUrl: this.deps.config.urls.gateway,
      prices: new Map(endpoints.map((e) => [e.id, effectivePrice(e, now).price_cents_effective])),
    });
  }

  async stats(slug: string, query: z.output<typeof StatsQuery>): Promise<ListingStats> {
    const em = this.deps.orm.em.fork();
    const api = await this.live(em, slug);
    return statsFor(em, api.id, query.window, this.deps.clock.now());
  }

  async history(slug: string, query: z.output<typeof HistoryQuery>): Promise<HistoryPointView[]> {
    const em = this.deps.orm.em.fork();
    const api = await this.live(em, slug);
    return historyFor(em, api.id, query.limit);
  }

  async ranks(slug: string): Promise<RankView[]> {
    const em = this.deps.orm.em.fork();
    const api = await this.live(em, slug);
    return ranksFor(em, api.id, api.category ?? null);
  }

  /**
   * The quote; `authorization` is the caller's header, if any. A bad credential is 401 (as on every route); a valid
   * session gets the gateway's answer to a session (401 in `admission`).
   */
  async quote(slug: string, query: QuoteQuery, authorization?: string): Promise<QuoteView> {
    const { keys, authenticator } = this.deps;
    let caller: QuoteCaller = { type: 'anonymous' };
    if (authorization !== undefined) {
      const credential = parseBearer(authorization);
      if (credential.type === 'session') {
        await authenticator.authenticate({ authorization });
        caller = { type: 'session' };
      } else {
        caller = { type: 'api_key', ...(await keys.authenticate(credential.token)) };
        // The key's spend as Postgres has it includes every call answered so far (core/spend/usage-barrier.ts).
        await untilUsageDrained(this.deps.spend, caller.principal.orgId);
      }
    }
    return this.quoteAs(slug, query, caller);
  }

  /** The quote for a caller already resolved (the agent-tool server's key, which may have come as an OAuth token). */
  async quoteAs(slug: string, query: QuoteQuery, caller: QuoteCaller): Promise<QuoteView> {
    const em = this.deps.orm.em.fork();
    const api = await this.live(em, slug);
    return quote(this.deps, em, api, query, caller, this.deps.clock.now());
  }

  /** Everything the storefront's listing page shows, with one read of the listing (listing-page.ts). */
  async page(slug: string): Promise<ListingPage> {
    const em = this.deps.orm.em.fork();
    return listingPage(this, em, await this.live(em, slug), this.deps.clock.now());
  }

  /** What the storefront's sitemap lists (sitemap.ts). */
  sitemap(): Promise<SitemapEntries> {
    return sitemapEntries(this.deps.orm.em.fork());
  }

  /** The taxonomy with the number of live listings in each category. */
  async categories(): Promise<CategoryView[]> {
    const rows = await this.deps.orm.em.fork().execute<{ slug: string; name: string; api_count: string }[]>(
      `select c.slug, c.name, count(a.id) as api_count
         from categories c left join apis a on a.category = c.slug and a.status = 'live'
        group by c.slug, c.name order by c.name, c.slug`,
    );
    return rows.map((r) => ({ slug: r.slug, name: r.name, api_count: Number(r.api_count) }));
  }

  async terms(slug: string, principal?: Principal): Promise<TermsView> {
    const { orm, documents } = this.deps;
    const em = orm.em.fork();
    const api = await this.live(em, slug);
    const docs = await documents.effectiveFor(em, api);
    const accepted = principal
      ? await documents.acceptedIds(
          em,
          principal.orgId,
          docs.map((d) => d.id),
        )
      : null;
    const views = docs.map((d) => ({ ...documents.view(d), accepted: accepted ? accepted.has(d.id) : null }));
    return {
      api: api.slug,
      documents: views,
      all_required_accepted: accepted ? views.every((d) => d.acceptance_mode !== 'required' || d.accepted) : null,
      approval_url: documents.approvalUrl(api),
    };
  }

  /** GET /v1/apis/{slug}/terms reduced to what an agent acts on (the `get_api_terms_status` tool). */
  async termsStatus(slug: string, principal: Principal): Promise<TermsStatusView> {
    const terms = await this.terms(slug, principal);
    const missing = terms.documents
      .filter((d) => d.acceptance_mode === 'required' && !d.accepted)
      .map((d) => ({
        document_id: d.document_id,
        kind: d.kind,
        title: d.title,
        version: d.version,
        content_hash: d.content_hash,
        snapshot_url: d.snapshot_url,
      }));
    return {
      api: terms.api,
      may_call: missing.length === 0,
      missing,
      optional_unaccepted: terms.documents
        .filter((d) => d.acceptance_mode !== 'required' && !d.accepted)
        .map((d) => d.document_id),
      approval_url: terms.approval_url,
      next_step: missing.length
        ? `Calls to ${terms.api} are refused (428 terms_acceptance_required) until a person, an owner or admin of ` +
          `your organization with a verified email, opens ${terms.approval_url} and accepts the terms; an API key ` +
          'cannot accept them.'
        : null,
    };
  }
}
