/**
 * A live listing's sub-resources and the taxonomy (issue 11): endpoints, schema, the raw OpenAPI export, stats,
 * score history, ranks, the quote, and GET /v1/categories. All public; the quote says more to a caller with a key. An
 * archived listing answers 410 `api_archived`; the quote of a removed endpoint 410 `endpoint_removed`.
 */
import { z } from 'zod';
import {
  CategoryView,
  EndpointPriceRow,
  ListingOpenApiDocument,
  ListingSchemaView,
  QuoteView,
} from '../../core/catalog/listings/listings.schemas.js';
import { HistoryPointView, ListingStats, RankView } from '../../core/catalog/rollups/rollups.schemas.js';
import { HistoryQuery, StatsQuery } from '../../core/catalog/listings/listings.service.js';
import { QuoteQuery } from '../../core/catalog/listings/quote.js';
import type { Services } from '../../platform/services.js';
import { env, rawJson } from '../openapi/operation.js';
import { route } from '../openapi/route.js';
import { CATALOG_GET, publicCatalogRouter } from './catalog.routes.js';

export const LISTINGS_ROUTES = [
  route(
    {
      ...CATALOG_GET,
      path: '/v1/categories',
      operationId: 'listCategories',
      summary: 'Categories with their live API counts',
      success: { 200: env(z.array(CategoryView), 'Categories.') },
    },
    (_ctx, { services }) => services.listings.categories(),
  ),
  route(
    {
      ...CATALOG_GET,
      path: '/v1/apis/{slug}/endpoints',
      operationId: 'listListingEndpoints',
      summary: 'Endpoint rows',
      errors: [410],
      success: { 200: env(z.array(EndpointPriceRow), 'The endpoints.') },
    },
    (_ctx, { services, params }) => services.listings.endpoints(params.slug),
  ),
  route(
    {
      ...CATALOG_GET,
      path: '/v1/apis/{slug}/schema',
      operationId: 'getListingSchema',
      summary: 'Endpoint input and output schemas (resolve proxy paths and methods)',
      errors: [410],
      success: { 200: env(ListingSchemaView, 'The schema.') },
    },
    (_ctx, { services, params }) => services.listings.schema(params.slug),
  ),
  // The spec's one exception to the envelope: the raw document, so client generators can read it as is.
  route(
    {
      ...CATALOG_GET,
      path: '/v1/apis/{slug}/openapi',
      operationId: 'getListingOpenApi',
      summary: "The listing's raw OpenAPI 3.0 document (no envelope)",
      errors: [410],
      success: { 200: rawJson(ListingOpenApiDocument, 'The document.') },
    },
    async (ctx, { services, params }) => {
      const doc = await services.listings.openapi(params.slug);
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = doc;
    },
  ),
  route(
    {
      ...CATALOG_GET,
      path: '/v1/apis/{slug}/stats',
      operationId: 'getListingStats',
      summary: 'Stats rollup over a window',
      errors: [410],
      query: StatsQuery,
      success: { 200: env(ListingStats, 'The stats.') },
    },
    (_ctx, { services, query, params }) => services.listings.stats(params.slug, query),
  ),
  route(
    {
      ...CATALOG_GET,
      path: '/v1/apis/{slug}/history',
      operationId: 'getListingHistory',
      summary: 'Score history',
      errors: [410],
      query: HistoryQuery,
      success: { 200: env(z.array(HistoryPointView), 'The latest daily points, oldest first.') },
    },
    (_ctx, { services, query, params }) => services.listings.history(params.slug, query),
  ),
  route(
    {
      ...CATALOG_GET,
      path: '/v1/apis/{slug}/ranks',
      operationId: 'getListingRanks',
      summary: 'Ranks per board',
      errors: [410],
      success: { 200: env(z.array(RankView), 'The ranks.') },
    },
    (_ctx, { services, params }) => services.listings.ranks(params.slug),
  ),
  // Documented as optional auth, but the quote reads the credential itself (an unknown one is judged, not refused).
  route(
    {
      ...CATALOG_GET,
      path: '/v1/apis/{slug}/quote',
      operationId: 'getQuote',
      summary: 'What a call would cost (more detail for a caller with a key)',
      errors: [410],
      auth: 'optional',
      handlerAuthenticates: true,
      query: QuoteQuery,
      success: { 200: env(QuoteView, 'The quote.') },
    },
    (ctx, { services, query, params }) => {
      const authorization = ctx.get('authorization') || undefined;
      // An answer about this caller's key must not be cached for anyone else.
      if (authorization) ctx.set('Cache-Control', 'no-store');
      return services.listings.quote(params.slug, query, authorization);
    },
  ),
];

export const listingsRoutes = (services: Services) => publicCatalogRouter(services, LISTINGS_ROUTES);
