/** Public catalog routes of this stage: search, listing detail, terms (and accepting them), providers, document snapshots. */
import { z } from 'zod';
import { SEARCH_WINDOW, SearchItem, SearchMeta, SearchQuery } from '../../core/catalog/search/search.schemas.js';
import { ListingDetail } from '../../core/catalog/listings/listings.schemas.js';
import { PaginationMeta } from '../../core/pagination.js';
import { ProviderDetail, ProviderListItem } from '../../core/profiles/profiles.schemas.js';
import { ProvidersQuery } from '../../core/providers/provider-directory.service.js';
import { AcceptTermsBody } from '../../core/providers/providers.schemas.js';
import { AcceptanceView, TermsView } from '../../core/terms/terms.schemas.js';
import type { Services } from '../../platform/services.js';
import { env, media, type OperationDecl } from '../openapi/operation.js';
import type Router from '@koa/router';
import type { AppState } from '../context.js';
import { publicReads } from '../middleware/public-reads.js';
import { mountRoutes, route, withMeta, type RouteDef } from '../openapi/route.js';

/** A public GET of the catalog: most routes here and every route of listings.routes.ts (429: the per-address limit). */
export const CATALOG_GET = {
  method: 'get',
  tag: 'Catalog',
  auth: 'none',
  errors: [429],
} as const satisfies Partial<OperationDecl>;

export const CATALOG_ROUTES = [
  // Public: hybrid search over live listings (core/catalog/search/search.service.ts); meta: totals, limit, offset.
  route(
    {
      ...CATALOG_GET,
      path: '/v1/search',
      operationId: 'search',
      summary: 'Search live listings (hybrid vector and keyword ranking)',
      description:
        `Totals are exact up to ${SEARCH_WINDOW} results; beyond, \`meta.total\` is ${SEARCH_WINDOW} with ` +
        `\`meta.total_exact: false\` (a lower bound). Results are paged within the first ${SEARCH_WINDOW}: ` +
        `\`offset + limit\` above ${SEARCH_WINDOW} answers 400 \`validation_failed\` with a hint to refine the query.`,
      query: SearchQuery,
      success: {
        200: env(
          z.array(SearchItem),
          'Ranked listings; meta carries total, total_exact, limit, offset and sort.',
          SearchMeta,
        ),
      },
    },
    async (_ctx, { services, query }) => {
      const { items, total, total_exact, limit, offset, sort } = await services.search.search(query);
      return withMeta(items, { total, total_exact, limit, offset, sort });
    },
  ),
  route(
    {
      ...CATALOG_GET,
      path: '/v1/apis/{slug}',
      operationId: 'getListing',
      summary: 'Listing detail (summary, tags, merit scores, pricing)',
      errors: [410],
      success: { 200: env(ListingDetail, 'The listing.') },
    },
    (_ctx, { services, params }) => services.listings.detail(params.slug),
  ),
  route(
    {
      ...CATALOG_GET,
      path: '/v1/apis/{slug}/terms',
      operationId: 'getListingTerms',
      summary: 'The effective provider terms (and, with a bearer, whether the caller accepted them)',
      errors: [410],
      auth: 'optional',
      success: { 200: env(TermsView, 'The terms.') },
    },
    (_ctx, { services, principal, params }) => services.listings.terms(params.slug, principal),
  ),
  // A person (owner or admin, verified email) accepts in force terms for their org; an API key alone gets 403.
  route(
    {
      method: 'post',
      path: '/v1/apis/{slug}/terms/accept',
      operationId: 'acceptListingTerms',
      summary: "Accept a listing's terms (an owner or admin with verified email; a key alone gets 403)",
      tag: 'Catalog',
      auth: 'session',
      body: AcceptTermsBody,
      success: { 200: env(AcceptanceView, 'Accepted.') },
      errors: [409, 422],
    },
    (_ctx, { services, principal, body, params }) => services.documents.acceptForListing(principal, params.slug, body),
  ),
  route(
    {
      ...CATALOG_GET,
      path: '/v1/providers',
      operationId: 'listProviders',
      summary: 'Provider directory',
      query: ProvidersQuery,
      success: { 200: env(z.array(ProviderListItem), 'A page of providers.', PaginationMeta) },
    },
    async (_ctx, { services, query }) => {
      const page = await services.providerDirectory.list(query);
      return withMeta(page.items, { pagination: page.pagination });
    },
  ),
  route(
    {
      ...CATALOG_GET,
      path: '/v1/providers/{slug}',
      operationId: 'getProvider',
      summary: 'A provider: profile, trust badges, stats, live APIs',
      success: { 200: env(ProviderDetail, 'The provider.') },
    },
    (_ctx, { services, params }) => services.providerDirectory.get(params.slug),
  ),
  // The exact text behind a content hash (what `snapshot_url` points to): raw markdown, not the envelope.
  route(
    {
      ...CATALOG_GET,
      path: '/v1/documents/{document_id}/snapshot',
      operationId: 'getDocumentSnapshot',
      summary: 'The exact text behind a content hash (raw Markdown, no envelope)',
      success: { 200: media('text/markdown', 'The document text.') },
    },
    async (ctx, { services, params }) => {
      const snap = await services.documents.snapshot(params.document_id);
      ctx.type = 'text/markdown; charset=utf-8';
      ctx.set('ETag', `"${snap.contentHash}"`);
      ctx.set('X-Content-Hash', snap.contentHash);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.body = snap.body;
    },
  ),
];

/**
 * A router of public catalog reads: each GET route counts against the per-address limit of public reads
 * (api/middleware/public-reads.ts) first, as the storefront's pages do. Put on each GET route's own layer, not with
 * `router.use`: a nested router's `use` middleware runs for every route the parent matches.
 */
export function publicCatalogRouter(services: Services, routes: readonly RouteDef<Services>[]): Router<AppState> {
  const router = mountRoutes(services, routes);
  const limit = publicReads(services);
  for (const layer of router.stack) if (layer.methods.includes('GET')) layer.stack.unshift(limit);
  return router;
}

export const catalogRoutes = (services: Services) => publicCatalogRouter(services, CATALOG_ROUTES);
