/**
 * Catalog and market tools: discover_tools, search_apis, get_categories, get_market_overview, get_leaderboard,
 * request_api, get_api_details, get_schema. Each calls the core function behind its REST route (GET /v1/search,
 * /v1/categories, /v1/market/overview, /v1/leaderboards/{board}, POST /v1/api-requests, GET /v1/apis/{slug},
 * /v1/apis/{slug}/schema) with the route's own input schema; reading the catalog needs `catalog:read`.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { requireScope } from '../../core/auth/scopes.js';
import {
  SEARCH_MAX_LIMIT,
  SEARCH_MAX_Q,
  SEARCH_SORTS,
  SearchMeta,
  SearchQuery,
} from '../../core/catalog/search/search.schemas.js';
import { BOARDS } from '../../core/catalog/rollups/rollups.scoring.js';
import { ApiRequestBody } from '../../core/demand/demand.service.js';
import { ApiRequestMeta, ApiRequestView } from '../../core/demand/demand.schemas.js';
import { LeaderboardQuery } from '../../core/catalog/rollups/market.service.js';
import { Leaderboard, MarketOverview } from '../../core/catalog/rollups/rollups.schemas.js';
import { CategoryView, ListingDetail, ListingSchemaView } from '../../core/catalog/listings/listings.schemas.js';
import type { Services } from '../../platform/services.js';
import type { ToolContext } from '../tool-context.js';
import { CompactListingOut, SearchItemOut } from './consumer-schemas.js';
import { checkArgs, parseArgs, runTool } from './tool-result.js';
import { dataOrError } from './tool-schemas.js';

/** Reads of our own catalog: no side effects, same answer for the same arguments, nothing outside the marketplace. */
export const CATALOG_READ = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

export const SlugArg = z.string().trim().min(1).max(200);

const SearchCategory = SearchQuery.shape.category.describe('From get_categories.');

/** `total` and `total_exact` as GET /v1/search's meta says them (exact up to the result window, then a lower bound). */
const Totals = SearchMeta.pick({ total: true, total_exact: true }).shape;

/** Only listings callable through the gateway (issue 22): directory entries are found, but not callable here. */
const CallableOnly = z.boolean().optional().describe('No directory entries.');

/** The tool definitions (built once per process: a 2026-07-28 request builds its server per request). */
const DEFS = {
  discover_tools: {
    title: 'Discover APIs',
    description: 'Find APIs for a task: compact ranked list (slug, summary, prices, score). Start here.',
    inputSchema: z
      .object({
        query: z.string().max(SEARCH_MAX_Q).describe('In plain words.'),
        category: SearchCategory,
        max_results: z.number().int().min(1).max(SEARCH_MAX_LIMIT).default(10),
        callable_only: CallableOnly,
      })
      .strict(),
    outputSchema: dataOrError(z.object({ query: z.string(), ...Totals, items: z.array(CompactListingOut) })),
    annotations: CATALOG_READ,
  },
  search_apis: {
    title: 'Search APIs',
    description: 'Full catalog search: listings with tags, category, prices, scores, provider.',
    inputSchema: z
      .object({
        query: z.string().max(SEARCH_MAX_Q).describe('Empty browses in `sort` order.'),
        category: SearchCategory,
        sort: z.enum(SEARCH_SORTS).optional().describe('Default: relevance with a query, svc_score without.'),
        max_price_cents: SearchQuery.shape.max_price_cents.describe('Cheapest paid endpoint at most this.'),
        limit: z.number().int().min(1).max(SEARCH_MAX_LIMIT).optional(),
        // offset + limit beyond SEARCH_WINDOW is refused by SearchQuery with the hint (not described here: every byte
        // of tools/list counts against the 29 KB of docs/decisions.md, issue 25).
        offset: z.number().int().min(0).max(1_000_000).optional(),
        callable_only: CallableOnly,
      })
      .strict(),
    outputSchema: dataOrError(
      z.looseObject({
        items: z.array(SearchItemOut),
        ...Totals,
        limit: z.number().int(),
        offset: z.number().int(),
        sort: z.string(),
      }),
    ),
    annotations: CATALOG_READ,
  },
  get_categories: {
    title: 'Categories',
    description: 'Categories with their number of live APIs.',
    inputSchema: z.object({}).strict(),
    outputSchema: dataOrError(z.object({ items: z.array(CategoryView) })),
    annotations: CATALOG_READ,
  },
  get_market_overview: {
    title: 'Market overview',
    description: 'Totals: live APIs, providers, calls, GMV (24 h, 7 days), median price.',
    inputSchema: z.object({}).strict(),
    outputSchema: dataOrError(MarketOverview),
    annotations: CATALOG_READ,
  },
  get_leaderboard: {
    title: 'Leaderboard',
    description: 'A ranked board of live APIs, overall or in a category.',
    inputSchema: z
      .object({
        board: z.enum(BOARDS),
        category: LeaderboardQuery.shape.category.describe('From get_categories.'),
        limit: z.number().int().min(1).max(500).optional(),
      })
      .strict(),
    outputSchema: dataOrError(Leaderboard),
    annotations: CATALOG_READ,
  },
  request_api: {
    title: 'Request an API',
    description: "Ask for an API the catalog lacks (a similar open request gets your org's vote).",
    inputSchema: z
      .object({
        query: ApiRequestBody.shape.query,
        email: ApiRequestBody.shape.email.describe('Told of a match once confirmed by a mailed link.'),
        notes: ApiRequestBody.shape.notes,
      })
      .strict(),
    outputSchema: dataOrError(
      ApiRequestView.extend(
        ApiRequestMeta.pick({ merged: true, notify_email: true, email_status: true, email_note: true }).shape,
      ),
    ),
    // Records a vote: additive, and asking again with the same words is the same single vote of this org.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  get_api_details: {
    title: 'API details',
    description:
      'One API: provider, scores, price per endpoint in cents, discounts, scheduled increases, required terms.',
    inputSchema: z.object({ slug: SlugArg }).strict(),
    outputSchema: dataOrError(ListingDetail),
    annotations: CATALOG_READ,
  },
  get_schema: {
    title: 'API schema',
    description: "An API's endpoints: method, path template, input and output JSON schemas.",
    inputSchema: z.object({ slug: SlugArg }).strict(),
    outputSchema: dataOrError(ListingSchemaView),
    annotations: CATALOG_READ,
  },
};

/** discover_tools (the compact list) and search_apis (the full search). */
function registerSearchTools(server: McpServer, services: Services, ctx: ToolContext): void {
  server.registerTool('discover_tools', DEFS.discover_tools, (args) =>
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
        total_exact: result.total_exact,
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

  server.registerTool('search_apis', DEFS.search_apis, (args) =>
    runTool(ctx.log, async () => {
      checkArgs(args);
      requireScope(ctx.principal, 'catalog:read');
      const { query, callable_only, ...rest } = args;
      const callable = callable_only ? { callable: 'true' } : {};
      return { ...(await services.search.search(parseArgs(SearchQuery, { q: query, ...rest, ...callable }))) };
    }),
  );
}

/** get_categories, get_market_overview, get_leaderboard, request_api. */
function registerMarketTools(server: McpServer, services: Services, ctx: ToolContext): void {
  server.registerTool('get_categories', DEFS.get_categories, () =>
    runTool(ctx.log, async () => {
      requireScope(ctx.principal, 'catalog:read');
      return { items: await services.listings.categories() };
    }),
  );

  server.registerTool('get_market_overview', DEFS.get_market_overview, () =>
    runTool(ctx.log, async () => {
      requireScope(ctx.principal, 'catalog:read');
      return { ...(await services.market.overview()) };
    }),
  );

  server.registerTool('get_leaderboard', DEFS.get_leaderboard, (args) =>
    runTool(ctx.log, async () => {
      checkArgs(args);
      requireScope(ctx.principal, 'catalog:read');
      const { board, ...query } = args;
      return { ...(await services.market.leaderboard(board, parseArgs(LeaderboardQuery, query))) };
    }),
  );

  server.registerTool('request_api', DEFS.request_api, (args) =>
    runTool(ctx.log, async () => {
      checkArgs(args);
      const r = await services.demand.request(ctx.principal, parseArgs(ApiRequestBody, args));
      return {
        ...r.request,
        merged: r.merged,
        notify_email: r.notifyEmail,
        email_status: r.emailStatus,
        email_note: r.emailNote,
      };
    }),
  );
}

/** get_api_details and get_schema: one listing. */
function registerListingTools(server: McpServer, services: Services, ctx: ToolContext): void {
  server.registerTool('get_api_details', DEFS.get_api_details, (args) =>
    runTool(ctx.log, async () => {
      checkArgs(args);
      requireScope(ctx.principal, 'catalog:read');
      return { ...(await services.listings.detail(args.slug)) };
    }),
  );

  server.registerTool('get_schema', DEFS.get_schema, (args) =>
    runTool(ctx.log, async () => {
      checkArgs(args);
      requireScope(ctx.principal, 'catalog:read');
      return { ...(await services.listings.schema(args.slug)) };
    }),
  );
}

/** The catalog tools, in the order tools/list shows them. */
export function registerCatalogTools(server: McpServer, services: Services, ctx: ToolContext): void {
  registerSearchTools(server, services, ctx);
  registerMarketTools(server, services, ctx);
  registerListingTools(server, services, ctx);
}
