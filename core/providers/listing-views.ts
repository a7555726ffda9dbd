/** What a provider sees of its own listings: the summary in a list, the whole listing, the upstream credential's state. */
import type { IApi, IApiRevision, IEndpoint } from '../../db/entities/index.js';
import type { Config } from '../config.js';
import { endpointView } from '../pricing/endpoint-view.js';
import type { ProviderApiSummary, ProviderApiView } from './providers.schemas.js';

export type { CredentialView, ProviderApiSummary, ProviderApiView } from './providers.schemas.js';

export function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}

export function summaryView(api: IApi, endpointCount: number): ProviderApiSummary {
  return {
    api_id: api.id,
    name: api.name,
    slug: api.slug,
    summary: api.summary,
    status: api.status,
    endpoint_count: endpointCount,
    verification_status: api.verificationStatus,
    published_at: iso(api.publishedAt),
    archived_at: iso(api.archivedAt),
    updated_at: api.updatedAt.toISOString(),
  };
}

export function listingView(
  api: IApi,
  endpoints: IEndpoint[],
  urls: Config['urls'],
  now: Date,
  revision: IApiRevision | null = null,
): ProviderApiView {
  const { endpoint_count: _count, ...summary } = summaryView(api, endpoints.length);
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
    endpoints: endpoints.map((e) => endpointView(e, now)),
    open_revision: revision
      ? {
          revision_id: revision.id,
          number: revision.number,
          add: revision.changes.add.length,
          update: revision.changes.update.length,
          remove: revision.changes.remove.length,
        }
      : null,
  };
}
