/** Response shapes of GET /v1/usage: one metered call, and the envelope `meta` with the page and the range totals. */
import { z } from 'zod';
import { PaginationMeta } from '../pagination.js';

/** One metered call (usage.service.ts `UsageRecord`). */
export const UsageEvent = z
  .looseObject({
    id: z.string(),
    created_at: z.string(),
    key_id: z.string(),
    api_slug: z.string(),
    endpoint_id: z.string().nullable(),
    method: z.string(),
    path: z.string(),
    status: z.number().int(),
    outcome: z.enum(['success', 'failed']),
    cost_cents: z.number().int(),
    price_cents_effective: z.number().int(),
    credit_applied_cents: z.number().int(),
    billable_cents: z.number().int(),
    latency_ms: z.number(),
    request_id: z.string(),
    idempotency_key: z.string().nullable(),
  })
  .describe('A metered call.');
export type UsageEvent = z.infer<typeof UsageEvent>;

/** The `meta` of GET /v1/usage: pagination, the range asked for and its totals. */
export const UsageMeta = PaginationMeta.extend({
  range: z.object({ from: z.string(), to: z.string() }),
  summary: z.object({
    calls: z.number().int(),
    successful_calls: z.number().int(),
    cost_cents: z.number().int(),
    billable_cents: z.number().int(),
  }),
});
export type UsageMeta = z.infer<typeof UsageMeta>;

/** The gateway's success `meta` (spec: Gateway proxy): what the call cost, and whether it was a replay. */
export const GatewayMeta = z.looseObject({
  request_id: z.string(),
  cost_cents: z.number().int().optional(),
  price_cents_effective: z.number().int().optional(),
  credit_applied_cents: z.number().int().optional(),
  billable_cents: z.number().int().optional(),
  price_increase: z.looseObject({}).optional(),
  discount: z.looseObject({}).optional(),
  replayed: z.boolean().optional(),
  original_request_id: z.string().optional(),
});
