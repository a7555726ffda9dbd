/** Offset pagination shared by list routes and tools: `limit` (1-200, default 50) and `offset` (default 0). */
import { z } from 'zod';

export const Pagination = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});

export interface PageInfo {
  limit: number;
  offset: number;
  total: number;
  has_more: boolean;
}

export interface Page<T> {
  items: T[];
  pagination: PageInfo;
}

export function pageInfo(limit: number, offset: number, returned: number, total: number): PageInfo {
  return { limit, offset, total, has_more: offset + returned < total };
}
