/**
 * One operation of a listing: method + path template, schemas, and its price in integer cents (0 = free), with an
 * optional scheduled increase (applied by priceChangeWorkflow) and an optional discount. A removal announced on a live
 * listing keeps the row here until its sunset (calls carry Deprecation and Sunset headers meanwhile); at the sunset
 * endpointRemovalWorkflow moves it to removed_endpoints (removed-endpoint.entity.ts).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Api } from './api.entity.js';
import { cents, prefixedId, timestamps } from './common.js';

export const ENDPOINT_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export type EndpointMethod = (typeof ENDPOINT_METHODS)[number];

export interface Discount {
  percent?: number;
  amount_cents?: number;
  starts_at?: string | null;
  ends_at?: string | null;
  label?: string | null;
}

export const Endpoint = defineEntity({
  name: 'Endpoint',
  tableName: 'endpoints',
  properties: {
    id: prefixedId(),
    api: p.manyToOne(Api).deleteRule('cascade'),
    method: p.enum([...ENDPOINT_METHODS]),
    path: p.string().length(500),
    summary: p.string().length(200).nullable(),
    operationId: p.string().length(200).nullable(),
    inputSchema: p.json<Record<string, unknown>>().nullable(),
    outputSchema: p.json<Record<string, unknown>>().nullable(),
    priceCents: cents().default(0),
    pendingPriceCents: cents().nullable(),
    pendingPriceEffectiveAt: p.datetime().nullable(),
    discount: p.json<Discount>().nullable(),
    position: p.integer().default(0),
    /** When its removal was announced (the `Deprecation` header), with `sunsetAt`; both null otherwise. */
    removalAnnouncedAt: p.datetime().nullable(),
    /** When the announced removal takes effect (the `Sunset` header); from then on calls answer 410. */
    sunsetAt: p.datetime().nullable(),
    ...timestamps(),
  },
  uniques: [{ name: 'endpoints_api_method_path_uniq', properties: ['api', 'method', 'path'] }],
  checks: [
    {
      name: 'endpoints_price_nonnegative',
      expression: 'price_cents >= 0 AND (pending_price_cents IS NULL OR pending_price_cents >= 0)',
    },
    {
      name: 'endpoints_pending_pair',
      expression: '(pending_price_cents IS NULL) = (pending_price_effective_at IS NULL)',
    },
    { name: 'endpoints_removal_pair', expression: '(removal_announced_at IS NULL) = (sunset_at IS NULL)' },
  ],
});

export type IEndpoint = InferEntity<typeof Endpoint>;
