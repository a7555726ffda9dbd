/**
 * What consumers see of a live listing: GET /v1/apis/{slug} (detail with pricing) and GET /v1/apis/{slug}/terms.
 * Drafts and unknown slugs are the same 404.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { Api, Endpoint, Profile, type IApi } from '../../db/entities/index.js';
import type { Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { NotFoundError } from '../errors.js';
import type { ProvidersService, EndpointView } from '../providers/providers.service.js';
import type { DocumentsService, DocumentView } from '../terms/documents.service.js';

export interface ListingDetail {
  slug: string;
  name: string;
  summary: string;
  description: string | null;
  tags: string[];
  category: string | null;
  provider: { slug: string | null; display_name: string | null };
  docs_url: string | null;
  gateway_url: string;
  published_at: string | null;
  verification: { status: string; checked_at: string | null };
  pricing: { endpoints: number; free_endpoints: number; min_price_cents: number; max_price_cents: number };
  terms: { required: boolean; documents: DocumentView[] };
  endpoints: EndpointView[];
}

export interface TermsView {
  api: string;
  documents: (DocumentView & { accepted: boolean | null })[];
  /** null when the caller is anonymous. */
  all_required_accepted: boolean | null;
  approval_url: string;
}

export class ListingsService {
  constructor(
    private readonly deps: {
      orm: MikroORM;
      config: Config;
      clock: Clock;
      providers: ProvidersService;
      documents: DocumentsService;
    },
  ) {}

  async live(em: EntityManager, slug: string): Promise<IApi> {
    const api = await em.findOne(Api, { slug, status: 'live' });
    if (!api) throw new NotFoundError(`No live API with slug "${slug}".`);
    return api;
  }

  async detail(slug: string): Promise<ListingDetail> {
    const { orm, config, clock, providers, documents } = this.deps;
    const em = orm.em.fork();
    const api = await this.live(em, slug);
    const [endpoints, profile, docs] = await Promise.all([
      em.find(Endpoint, { api: api.id }, { orderBy: { position: 'asc', id: 'asc' } }),
      em.findOne(Profile, { org: api.org.id }),
      documents.effectiveFor(em, api),
    ]);
    const now = clock.now();
    const views = endpoints.map((e) => providers.endpointView(e, now));
    const prices = views.map((v) => v.price_cents_effective);
    return {
      slug: api.slug,
      name: api.name,
      summary: api.summary,
      description: api.description ?? null,
      tags: [...api.tags],
      category: api.category ?? null,
      provider: { slug: profile?.slug ?? null, display_name: profile?.displayName ?? null },
      docs_url: api.docsUrl ?? null,
      gateway_url: `${config.urls.gateway}/v1/proxy/${api.slug}`,
      published_at: api.publishedAt?.toISOString() ?? null,
      verification: { status: api.verificationStatus, checked_at: api.verification?.checked_at ?? null },
      pricing: {
        endpoints: views.length,
        free_endpoints: prices.filter((p) => p === 0).length,
        min_price_cents: prices.length ? Math.min(...prices) : 0,
        max_price_cents: prices.length ? Math.max(...prices) : 0,
      },
      terms: {
        required: docs.some((d) => d.acceptanceMode === 'required'),
        documents: docs.map((d) => documents.view(d)),
      },
      endpoints: views,
    };
  }

  async terms(slug: string, principal?: Principal): Promise<TermsView> {
    const { orm, config, documents } = this.deps;
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
      approval_url: `${config.urls.publicBase}/terms/${api.slug}`,
    };
  }
}
