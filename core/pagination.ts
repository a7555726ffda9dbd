/** Offset pagination shared by list routes and tools: `limit` (1-200, default 50) and `offset` (default 0). */
import { z } from 'zod';

export const Pagination = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});

/** Where a page sits in the whole list: the `meta.pagination` of list routes and tools. */
export const PageInfo = z.object({
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
  has_more: z.boolean(),
});
export type PageInfo = z.infer<typeof PageInfo>;

/** The envelope `meta` of a paginated list. */
export const PaginationMeta = z.looseObject({ request_id: z.string(), pagination: PageInfo });

export interface Page<T> {
  items: T[];
  pagination: PageInfo;
}

export function pageInfo(limit: number, offset: number, returned: number, total: number): PageInfo {
  return { limit, offset, total, has_more: offset + returned < total };
}
