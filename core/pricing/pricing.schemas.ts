/** Response `data` of the provider's pricing routes and tools: an endpoint as its provider sees it (endpoint-view.ts). */
import { z } from 'zod';
import { ENDPOINT_METHODS } from '../../db/entities/index.js';

const Cents = z.number().int();

/** A discount as stored (exactly one of `percent`, `amount_cents`); `off_cents` while it is active. */
export const DiscountView = z.object({
  percent: z.number().int().optional(),
  amount_cents: Cents.optional(),
  starts_at: z.string().nullable().optional(),
  ends_at: z.string().nullable().optional(),
  label: z.string().nullable().optional(),
  off_cents: Cents.optional().describe('What the discount takes off a call now; absent while it is not active.'),
});

/** An announced removal: calls carry `Deprecation` and `Sunset` headers until `sunset_at`, then answer 410. */
export const RemovalView = z.object({ announced_at: z.string(), sunset_at: z.string() });
export type RemovalView = z.infer<typeof RemovalView>;

export const EndpointView = z.object({
  endpoint_id: z.string(),
  method: z.enum(ENDPOINT_METHODS),
  path: z.string(),
  summary: z.string().nullable(),
  operation_id: z.string().nullable(),
  price_cents: Cents.describe('The list price per call, before any discount.'),
  price_cents_effective: Cents.describe('What a call costs now.'),
  price_increase: z
    .object({ price_cents: Cents, effective_at: z.string() })
    .nullable()
    .describe('A scheduled increase, until it applies.'),
  discount: DiscountView.nullable(),
  input_schema: z.record(z.string(), z.unknown()).nullable(),
  output_schema: z.record(z.string(), z.unknown()).nullable(),
  removal: RemovalView.nullable().describe('An announced removal; after sunset_at calls answer 410 endpoint_removed.'),
});
export type EndpointView = z.infer<typeof EndpointView>;

/** PATCH /v1/provider/apis/{api_id}/pricing: the endpoints the change named, as they are after it. */
export const PricingView = z.object({ endpoints: z.array(EndpointView) });
export type PricingView = z.infer<typeof PricingView>;
