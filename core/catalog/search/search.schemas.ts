/** Input of GET /v1/search (and the search tool): zod, strict, the spec's limits. */
import { z } from 'zod';
import { API_SOURCES } from '../../../db/entities/index.js';
import { Slug } from '../../providers/providers.schemas.js';
import { CategoryRef, MeritParts, ProviderRef } from '../rollups/rollups.schemas.js';

export const SEARCH_SORTS = [
  'svc_score',
  'price',
  'relevance',
  'new',
  'calls',
  'gmv',
  'reliability',
  'value',
  'momentum',
] as const;
export type SearchSort = (typeof SEARCH_SORTS)[number];

export const SEARCH_MAX_LIMIT = 500;
export const SEARCH_MAX_Q = 500;
/**
 * The result window (docs/decisions.md, "Search totals and the result window"): totals are exact up to this many
 * results, then `total` is this lower bound with `total_exact: false`; results are paged only within it (`offset +
 * limit` beyond it answers 400: refine the query instead).
 */
export const SEARCH_WINDOW = 10_000;
export const SEARCH_WINDOW_HINT =
  `must leave offset + limit at most ${SEARCH_WINDOW}: results are paged only within the first ${SEARCH_WINDOW}; ` +
  'refine the query (more words, a category, a price filter or callable) to reach the rest';

/** `pricing`: `free`, every endpoint free; `paid`, at least one paid endpoint (docs/decisions.md, issue 31). */
export const SEARCH_PRICING = ['free', 'paid'] as const;
export type SearchPricing = (typeof SEARCH_PRICING)[number];

const PriceBound = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const SearchQuery = z
  .object({
    q: z.string().max(SEARCH_MAX_Q, `must be at most ${SEARCH_MAX_Q} characters`).trim().default(''),
    category: Slug.optional(),
    sort: z.enum(SEARCH_SORTS, { error: `must be one of ${SEARCH_SORTS.join(', ')}` }).optional(),
    limit: z.coerce.number().int().min(1).max(SEARCH_MAX_LIMIT).default(50),
    offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
    min_price_cents: PriceBound.optional().describe(
      'Only listings whose cheapest paid endpoint costs at least this many cents (a listing whose endpoints are all ' +
        'free counts as 0; a listing without endpoints is left out).',
    ),
    max_price_cents: PriceBound.optional().describe(
      'Only listings whose cheapest paid endpoint costs at most this many cents (a listing whose endpoints are all ' +
        'free counts as 0; a listing without endpoints is left out).',
    ),
    pricing: z
      .enum(SEARCH_PRICING, { error: `must be one of ${SEARCH_PRICING.join(', ')}` })
      .optional()
      .describe('`free`: every endpoint is free; `paid`: at least one endpoint has a price.'),
    source: z.enum(API_SOURCES).optional(),
    /** `true`: only listings callable through the gateway (a provider's); `false`: only directory entries. */
    callable: z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
  })
  .strict()
  .refine((q) => q.offset + q.limit <= SEARCH_WINDOW, { path: ['offset'], message: SEARCH_WINDOW_HINT })
  .refine(
    (q) => q.min_price_cents === undefined || q.max_price_cents === undefined || q.min_price_cents <= q.max_price_cents,
    {
      path: ['min_price_cents'],
      message: 'must not be more than max_price_cents',
    },
  );
export type SearchQuery = z.infer<typeof SearchQuery>;

/** One ranked listing of GET /v1/search (and of the search tool). */
export const SearchItem = z
  .looseObject({
    slug: z.string(),
    name: z.string(),
    summary: z.string(),
    category: CategoryRef.nullable(),
    tags: z.array(z.string()),
    source: z.enum(['provider', 'directory']),
    callable: z.boolean().describe('Callable through the gateway (a provider’s listing); a directory entry is not.'),
    docs_url: z.string().nullable(),
    price: z
      .object({
        min_price_cents: z.number().int().nullable(),
        max_price_cents: z.number().int().nullable(),
        free: z.boolean().describe('Every endpoint is free (as the detail’s `pricing.free`).'),
      })
      .describe('Base prices over the endpoints; nulls and `free: false` without endpoints.'),
    svc_score: z.number(),
    merit: MeritParts,
    relevance: z.number().optional().describe('0-1, only with `q`.'),
    provider: ProviderRef,
  })
  .describe('A ranked listing.');
export type SearchItem = z.infer<typeof SearchItem>;

/** The envelope `meta` of GET /v1/search: the totals and the sort applied. */
export const SearchMeta = z.looseObject({
  request_id: z.string(),
  total: z
    .number()
    .int()
    .describe(
      `Results in all when \`total_exact\`; otherwise at least this many (${SEARCH_WINDOW}, the result window).`,
    ),
  total_exact: z
    .boolean()
    .describe(`false when more than ${SEARCH_WINDOW} listings match: \`total\` is then a lower bound.`),
  limit: z.number().int(),
  offset: z.number().int(),
  sort: z.string(),
});
