/** Response `data` of a listing's sub-resources (listings.service.ts, rollup-reads.ts; the OpenAPI document shares them). */
import { z } from 'zod';

export const CategoryView = z.object({ slug: z.string(), name: z.string(), api_count: z.number().int() });
export type CategoryView = z.infer<typeof CategoryView>;

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

/** An endpoint's active discount (the stored Discount) with the cents it takes off now (core/pricing/effective-price.ts). */
export const DiscountView = z.looseObject({
  percent: z.number().optional(),
  amount_cents: z.number().int().optional(),
  starts_at: z.string().nullable().optional(),
  ends_at: z.string().nullable().optional(),
  label: z.string().nullable().optional(),
  off_cents: z.number().int(),
});
export type DiscountView = z.infer<typeof DiscountView>;

/** A quote's `admission` (quote.ts): the gateway's decision now, with the error it would answer when it refuses. */
export const AdmissionView = z.looseObject({
  allowed: z.boolean(),
  error_code: z.string().optional(),
  status: z.number().int().optional(),
  message: z.string().optional(),
  details: z.looseObject({}).optional(),
});
export type AdmissionView = z.infer<typeof AdmissionView>;

/** GET /v1/apis/{slug}/quote (quote.ts): what a call would cost, and the gateway's decision for a bearer caller. */
export const QuoteView = z
  .looseObject({
    api: z.string(),
    endpoint: z.object({
      endpoint_id: z.string(),
      method: z.string(),
      path: z.string(),
      summary: z.string().nullable(),
    }),
    gateway_url: z.string(),
    price_cents: z.number().int(),
    price_cents_effective: z.number().int(),
    price_increase: z.object({ price_cents: z.number().int(), effective_at: z.string() }).nullable(),
    discount: DiscountView.nullable(),
    admission: AdmissionView.optional().describe(
      'What the gateway would decide now, when the caller sent a bearer credential.',
    ),
  })
  .describe('The quote.');
export type QuoteView = z.infer<typeof QuoteView>;
