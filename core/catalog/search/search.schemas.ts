/** Input of GET /v1/search (and the search tool): zod, strict, the spec's limits. */
import { z } from 'zod';
import { API_SOURCES } from '../../../db/entities/index.js';
import { Slug } from '../../providers/providers.schemas.js';

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

export const SearchQuery = z
  .object({
    q: z.string().max(SEARCH_MAX_Q, `must be at most ${SEARCH_MAX_Q} characters`).trim().default(''),
    category: Slug.optional(),
    sort: z.enum(SEARCH_SORTS, { error: `must be one of ${SEARCH_SORTS.join(', ')}` }).optional(),
    limit: z.coerce.number().int().min(1).max(SEARCH_MAX_LIMIT).default(50),
    offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
    max_price_cents: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    source: z.enum(API_SOURCES).optional(),
    /** `true`: only listings callable through the gateway (a provider's); `false`: only directory entries. */
    callable: z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
  })
  .strict();
export type SearchQuery = z.infer<typeof SearchQuery>;
