/** Response `data` of a listing's sub-resources (listings.service.ts, rollup-reads.ts; the OpenAPI document shares them). */
import { z } from 'zod';

export const CategoryView = z.object({ slug: z.string(), name: z.string(), api_count: z.number().int() });

/** One board rank of a listing (rollup-reads.ts RankRow). */
export const RankView = z.object({
  board: z.string(),
  scope: z.enum(['overall', 'category']),
  category: z.string().nullable(),
  rank: z.number().int().nullable(),
  board_size: z.number().int(),
  metric: z.number().nullable(),
  updated_at: z.string().nullable(),
});

/** One daily score point (rollup-reads.ts HistoryPoint: the day, the score and its merit parts). */
export const HistoryPointView = z.looseObject({ day: z.string(), svc_score: z.number() });
