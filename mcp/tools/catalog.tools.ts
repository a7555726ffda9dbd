/**
 * Catalog and market tools: discover_tools, search_apis, get_categories, get_market_overview, get_leaderboard,
 * request_api, get_api_details, get_schema. Each calls the core function behind its REST route (GET /v1/search,
 * /v1/categories, /v1/market/overview, /v1/leaderboards/{board}, POST /v1/api-requests, GET /v1/apis/{slug},
 * /v1/apis/{slug}/schema) with the route's own input schema; reading the catalog needs `catalog:read`.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { requireScope } from '../../core/auth/scopes.js';
import { SEARCH_MAX_LIMIT, SEARCH_MAX_Q, SEARCH_SORTS, SearchQuery } from '../../core/catalog/search.schemas.js';
import { BOARDS } from '../../core/catalog/rollups.scoring.js';
import { ApiRequestBody } from '../../core/demand/demand.service.js';
import { LeaderboardQuery } from '../../core/market/market.service.js';
import type { Services } from '../../core/services.js';
import type { ToolContext } from '../tool-context.js';
import { CompactListingOut, ListingDetailOut, SchemaOut, SearchItemOut } from './consumer-schemas.js';
import { checkArgs, parseArgs, runTool } from './tool-result.js';
import { dataOrError } from './tool-schemas.js';

/** Reads of our own catalog: no side effects, same answer for the same arguments, nothing outside the marketplace. */
export const CATALOG_READ = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

export const SlugArg = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .describe('The API\'s slug, as search results and listings show it (e.g. "weather-now").');

const SearchCategory = SearchQuery.shape.category.describe('Only APIs in this category (a slug from get_categories).');

/** Only listings callable through the gateway (issue 22): directory entries are found, but not callable here. */
const CallableOnly = z
  .boolean()
  .optional()
  .describe('true: only APIs callable through the gateway (leaves out directory entries, which are not).');

export function registerCatalogTools(server: McpServer, services: Services, ctx: ToolContext): void {
  server.registerTool(
    'discover_tools',
    {
      title: 'Discover APIs (compact)',
      description:
        'Find catalog APIs that can do a task, in a compact list (slug, name, one-line summary, price range, score). ' +
        'Use it first when you need a capability; then get_schema for how to call one and quote_call for its price. ' +
        'Free; nothing is charged. Same ranking as search_apis (hybrid keyword + semantic).',
      inputSchema: z
        .object({
          query: z
            .string()
            .max(SEARCH_MAX_Q)
            .describe('What you need, in plain words (e.g. "current weather by city"). Empty browses by score.'),
          category: SearchCategory,
          max_results: z
            .number()
            .int()
            .min(1)
            .max(SEARCH_MAX_LIMIT)
            .default(10)
            .describe(`How many results (1-${SEARCH_MAX_LIMIT}, default 10).`),
          callable_only: CallableOnly,
        })
        .strict(),
      outputSchema: dataOrError(
        z.object({ query: z.string(), total: z.number().int(), items: z.array(CompactListingOut) }),
      ),
      annotations: CATALOG_READ,
    },
    (args) =>
      runTool(ctx.log, async () => {
        checkArgs(args);
        requireScope(ctx.principal, 'catalog:read');
        const query = parseArgs(SearchQuery, {
          q: args.query,
          category: args.category,
          limit: args.max_results,
          ...(args.callable_only ? { callable: 'true' } : {}),
        });
        const result = await services.search.search(query);
        return {
          query: query.q,
          total: result.total,
          items: result.items.map((i) => ({
            slug: i.slug,
            name: i.name,
            summary: i.summary,
            category: i.category?.slug ?? null,
            has_free_endpoint: i.price.min_price_cents === 0,
            min_price_cents: i.price.min_price_cents,
            max_price_cents: i.price.max_price_cents,
            svc_score: i.svc_score,
            // Directory entries are searchable but not callable until their provider lists them.
            callable: i.callable,
          })),
        };
      }),
  );

  server.registerTool(
    'search_apis',
    {
      title: 'Search APIs',
      description:
        'Full catalog search (GET /v1/search): ranked listings with summary, tags, category, price range, merit ' +
        'scores and provider. Use it to compare candidates; discover_tools gives a shorter list. Free.',
      inputSchema: z
        .object({
          query: z.string().max(SEARCH_MAX_Q).describe('Search words; empty browses the catalog in `sort` order.'),
          category: SearchCategory,
          sort: z
            .enum(SEARCH_SORTS)
            .optional()
            .describe('Order: relevance (default with a query), svc_score (default without), price, new, calls, ...'),
          max_price_cents: SearchQuery.shape.max_price_cents.describe(
            'Only APIs with an endpoint costing at most this many cents per call.',
          ),
          limit: z
            .number()
            .int()
            .min(1)
            .max(SEARCH_MAX_LIMIT)
            .optional()
            .describe(`Page size, 1-${SEARCH_MAX_LIMIT} (default 50).`),
          offset: z.number().int().min(0).max(1_000_000).optional().describe('Results to skip (default 0).'),
          callable_only: CallableOnly,
        })
        .strict(),
      outputSchema: dataOrError(
        z.looseObject({
          items: z.array(SearchItemOut),
          total: z.number().int(),
          limit: z.number().int(),
          offset: z.number().int(),
          sort: z.string(),
        }),
      ),
      annotations: CATALOG_READ,
    },
    (args) =>
      runTool(ctx.log, async () => {
        checkArgs(args);
        requireScope(ctx.principal, 'catalog:read');
        const { query, callable_only, ...rest } = args;
        const callable = callable_only ? { callable: 'true' } : {};
        return { ...(await services.search.search(parseArgs(SearchQuery, { q: query, ...rest, ...callable }))) };
      }),
  );

  server.registerTool(
    'get_categories',
    {
      title: 'List categories',
      description: 'The category taxonomy with the number of live APIs in each (GET /v1/categories). Free.',
      inputSchema: z.object({}).strict(),
      outputSchema: dataOrError(
        z.object({
          items: z.array(z.looseObject({ slug: z.string(), name: z.string(), api_count: z.number().int() })),
        }),
      ),
      annotations: CATALOG_READ,
    },
    () =>
      runTool(ctx.log, async () => {
        requireScope(ctx.principal, 'catalog:read');
        return { items: await services.listings.categories() };
      }),
  );

  server.registerTool(
    'get_market_overview',
    {
      title: 'Market overview',
      description:
        'Marketplace totals (GET /v1/market/overview): live APIs, providers, calls and GMV over 24 h and 7 days, ' +
        'active consumers, median price. Free.',
      inputSchema: z.object({}).strict(),
      outputSchema: dataOrError(
        z.looseObject({
          live_apis: z.number().int(),
          providers: z.number().int(),
          categories: z.number().int(),
          calls_24h: z.number().int(),
          calls_7d: z.number().int(),
          gmv_cents_24h: z.number().int(),
          gmv_cents_7d: z.number().int(),
          median_price_cents: z.number().nullable(),
          updated_at: z.string().nullable(),
        }),
      ),
      annotations: CATALOG_READ,
    },
    () =>
      runTool(ctx.log, async () => {
        requireScope(ctx.principal, 'catalog:read');
        return { ...(await services.market.overview()) };
      }),
  );

  server.registerTool(
    'get_leaderboard',
    {
      title: 'Leaderboard',
      description:
        'A ranked board of live APIs (GET /v1/leaderboards/{board}): top_grossing, most_used, most_reliable, ' +
        'best_value, trending or new_rising, overall or within a category. Free.',
      inputSchema: z
        .object({
          board: z.enum(BOARDS).describe(`Which board: ${BOARDS.join(', ')}.`),
          category: LeaderboardQuery.shape.category.describe('Rank within this category (a slug from get_categories).'),
          limit: z.number().int().min(1).max(500).optional().describe('How many ranks (1-500, default 50).'),
        })
        .strict(),
      outputSchema: dataOrError(
        z.looseObject({
          board: z.string(),
          metric: z.string(),
          items: z.array(
            z.looseObject({
              rank: z.number().int(),
              slug: z.string(),
              name: z.string(),
              metric: z.looseObject({ name: z.string(), value: z.number() }),
            }),
          ),
        }),
      ),
      annotations: CATALOG_READ,
    },
    (args) =>
      runTool(ctx.log, async () => {
        checkArgs(args);
        requireScope(ctx.principal, 'catalog:read');
        const { board, ...query } = args;
        return { ...(await services.market.leaderboard(board, parseArgs(LeaderboardQuery, query))) };
      }),
  );

  server.registerTool(
    'request_api',
    {
      title: 'Request a missing API',
      description:
        'Ask for an API the catalog lacks (POST /v1/api-requests). A request like an open one is merged into it ' +
        '(one vote per organization); with `email`, that address is told once a matching API goes live if it is ' +
        "a verified email of the caller's organization (any other address is not kept or mailed). Free.",
      inputSchema: z
        .object({
          query: ApiRequestBody.shape.query.describe('What the API should do (e.g. "translate text to Welsh").'),
          email: ApiRequestBody.shape.email.describe(
            "Who to tell when a matching API is published: a verified email of the caller's organization.",
          ),
          notes: ApiRequestBody.shape.notes.describe('Anything else a provider should know.'),
        })
        .strict(),
      outputSchema: dataOrError(
        z.looseObject({
          id: z.string(),
          query: z.string(),
          votes: z.number().int(),
          status: z.string(),
          merged: z.boolean(),
          notify_email: z.string().nullable(),
        }),
      ),
      // Records a vote: additive, and asking again with the same words is the same single vote of this org.
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      runTool(ctx.log, async () => {
        checkArgs(args);
        const { request, merged, notifyEmail } = await services.demand.request(
          ctx.principal,
          parseArgs(ApiRequestBody, args),
        );
        return { ...request, merged, notify_email: notifyEmail };
      }),
  );

  server.registerTool(
    'get_api_details',
    {
      title: 'API details',
      description:
        'One live API (GET /v1/apis/{slug}): summary, tags, provider, merit scores, pricing per endpoint (cents per ' +
        'call, discounts, scheduled increases) and whether its terms must be accepted before calling. Free.',
      inputSchema: z.object({ slug: SlugArg }).strict(),
      outputSchema: dataOrError(ListingDetailOut),
      annotations: CATALOG_READ,
    },
    (args) =>
      runTool(ctx.log, async () => {
        checkArgs(args);
        requireScope(ctx.principal, 'catalog:read');
        return { ...(await services.listings.detail(args.slug)) };
      }),
  );

  server.registerTool(
    'get_schema',
    {
      title: 'API endpoints and schemas',
      description:
        "An API's endpoints with method, path template and JSON input/output schemas (GET /v1/apis/{slug}/schema): " +
        'what call_api needs (`endpoint` is the path with its {parameters} filled in). Free.',
      inputSchema: z.object({ slug: SlugArg }).strict(),
      outputSchema: dataOrError(SchemaOut),
      annotations: CATALOG_READ,
    },
    (args) =>
      runTool(ctx.log, async () => {
        checkArgs(args);
        requireScope(ctx.principal, 'catalog:read');
        return { ...(await services.listings.schema(args.slug)) };
      }),
  );
}
