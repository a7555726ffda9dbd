/**
 * Response `data` of a live listing and its sub-resources (listings.service.ts, quote.ts, openapi-export.ts; the
 * OpenAPI document and the agent tools share them). What the rollup readers answer (merit, stats, history, ranks)
 * is in core/catalog/rollups/rollups.schemas.ts.
 */
import { z } from 'zod';
import { API_SOURCES, ENDPOINT_METHODS, VERIFICATION_STATUSES } from '../../../db/entities/index.js';
import { openApiDocumentSchema } from '../../openapi-document.js';
import { RemovalView } from '../../pricing/pricing.schemas.js';
import { DocumentView } from '../../terms/terms.schemas.js';
import { CategoryRef, Merit, ProviderRef } from '../rollups/rollups.schemas.js';

export const CategoryView = z.object({ slug: z.string(), name: z.string(), api_count: z.number().int() });
export type CategoryView = z.infer<typeof CategoryView>;

/** An endpoint as a listing's sub-resources name it. */
export const EndpointRef = z.object({
  endpoint_id: z.string(),
  method: z.enum(ENDPOINT_METHODS),
  path: z.string(),
  summary: z.string().nullable(),
  removal: RemovalView.nullable(),
});

/** A scheduled increase: the new price and when it applies. */
export const PriceIncrease = z.object({ price_cents: z.number().int(), effective_at: z.string() });
/** The discount active now (as the provider set it) and the cents it takes off. */
export const DiscountView = z.object({
  percent: z.number().int().optional(),
  amount_cents: z.number().int().optional(),
  starts_at: z.string().nullable().optional(),
  ends_at: z.string().nullable().optional(),
  label: z.string().nullable().optional(),
  off_cents: z.number().int(),
});

/** What a call costs now (core/pricing/effective-price.ts). */
export const PriceFields = z.object({
  price_cents: z.number().int().describe('Before discount (the scheduled price once its time has come).'),
  price_cents_effective: z.number().int(),
  price_increase: PriceIncrease.nullable(),
  discount: DiscountView.nullable(),
});

/** GET /v1/apis/{slug}/endpoints (and the detail's `endpoints`): one endpoint and its price now. */
export const EndpointPriceRow = EndpointRef.extend({ ...PriceFields.shape, free: z.boolean() });
export type EndpointPriceRow = z.infer<typeof EndpointPriceRow>;

/** A JSON Schema as the provider gave it (free-form by nature: any JSON Schema the provider wrote). */
const ProviderJsonSchema = z.record(z.string(), z.unknown()).nullable();

/** GET /v1/apis/{slug}/schema: where to call each endpoint and its input and output JSON Schemas. */
export const ListingSchemaView = z.object({
  api: z.string(),
  gateway_url: z.string(),
  endpoints: z.array(
    EndpointRef.extend({
      gateway_url: z.string().describe('`{gateway_url}/v1/proxy/{slug}{path}`, called with the same method.'),
      input_schema: ProviderJsonSchema,
      output_schema: ProviderJsonSchema,
    }),
  ),
});
export type ListingSchemaView = z.infer<typeof ListingSchemaView>;

/** GET /v1/apis/{slug}: the listing detail (summary, tags, merit scores, pricing, terms). */
export const ListingDetail = z.object({
  slug: z.string(),
  name: z.string(),
  summary: z.string(),
  description: z.string().nullable(),
  status: z.literal('live'),
  source: z.enum(API_SOURCES),
  category: CategoryRef.nullable(),
  tags: z.array(z.string()),
  examples: z.array(z.string()),
  provider: ProviderRef,
  docs_url: z.string().nullable(),
  callable: z.boolean().describe('Callable through the gateway (a provider’s listing); a directory entry is not.'),
  gateway_url: z.string().nullable().describe('Where to call it; null for a directory entry.'),
  directory_entry: z
    .object({ note: z.string(), how_to_list: z.string() })
    .optional()
    .describe('A directory entry only: what it is and how its provider makes it callable.'),
  published_at: z.string().nullable(),
  verification: z.object({ status: z.enum(VERIFICATION_STATUSES), checked_at: z.string().nullable() }),
  svc_score: Merit.shape.svc_score,
  merit: Merit.omit({ svc_score: true }),
  pricing: z.object({
    endpoints: z.number().int(),
    free_endpoints: z.number().int(),
    min_price_cents: z.number().int(),
    max_price_cents: z.number().int(),
    free: z.boolean().describe('Every endpoint is free (false without endpoints).'),
  }),
  endpoints: z.array(EndpointPriceRow).describe('Pricing per endpoint (schemas: GET /v1/apis/{slug}/schema).'),
  terms: z.object({ required: z.boolean(), documents: z.array(DocumentView) }),
});
export type ListingDetail = z.infer<typeof ListingDetail>;

/** GET /v1/apis/{slug}/openapi (openapi-export.ts): the listing's OpenAPI 3.0.3 document for client generators. */
export const ListingOpenApiDocument = openApiDocumentSchema(
  '3.0.3',
  "The listing's OpenAPI 3.0.3 document, served raw (no envelope).",
);
export type ListingOpenApiDocument = z.infer<typeof ListingOpenApiDocument>;

/** What the gateway would decide now for a bearer caller (quote.ts). */
export const AdmissionView = z.object({
  allowed: z.boolean(),
  error_code: z.string().optional(),
  status: z.number().int().optional(),
  message: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional().describe('The refusal’s details, as the gateway sends them.'),
});
export type AdmissionView = z.infer<typeof AdmissionView>;

/** GET /v1/apis/{slug}/quote (quote.ts): what a call would cost, and the gateway's decision for a bearer caller. */
export const QuoteView = z
  .object({
    api: z.string(),
    endpoint: EndpointRef,
    gateway_url: z.string(),
    ...PriceFields.shape,
    admission: AdmissionView.optional().describe(
      'What the gateway would decide now, when the caller sent a bearer credential.',
    ),
  })
  .describe('The quote.');
export type QuoteView = z.infer<typeof QuoteView>;
