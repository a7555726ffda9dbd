/**
 * The provider tools' argument and output shapes (provider.tools.ts registers the tools, provider-tool-defs.ts defines
 * them): the `api_id` argument, a listing as the provider routes answer it, a lifecycle step's answer, and create's
 * and update's fields taken from the REST bodies.
 */
import { z } from 'zod';
import { CreateApiBody, CredentialsBody, UpdateApiBody } from '../../core/providers/providers.schemas.js';

export const ApiId = z.string().trim().min(1).max(100);

export const NullableString = z.string().nullable();
export const Loose = z.looseObject({});

export const EndpointOut = z.looseObject({
  endpoint_id: z.string(),
  method: z.string(),
  path: z.string(),
  summary: NullableString,
  price_cents: z.number().int(),
  price_cents_effective: z.number().int(),
  price_increase: z.looseObject({ price_cents: z.number().int(), effective_at: z.string() }).nullable(),
  discount: Loose.nullable(),
  input_schema: Loose.nullable(),
  output_schema: Loose.nullable(),
});

export const SummaryOut = {
  api_id: z.string(),
  name: z.string(),
  slug: z.string(),
  summary: z.string(),
  status: z.enum(['draft', 'live']),
  verification_status: z.string(),
  published_at: NullableString,
  updated_at: z.string(),
};

export const CredentialOut = {
  set: z.boolean(),
  injection: NullableString,
  injection_name: NullableString,
  updated_at: NullableString,
};

export const ProviderApiOut = {
  ...SummaryOut,
  description: NullableString,
  tags: z.array(z.string()),
  category: NullableString,
  examples: z.array(z.string()),
  source: z.string(),
  base_url: z.string(),
  docs_url: NullableString,
  import_source: Loose.nullable(),
  credential: z.looseObject(CredentialOut),
  verification: z.looseObject({ status: z.string(), result: Loose.nullable() }),
  listing_url: z.string(),
  gateway_url: z.string(),
  created_at: z.string(),
  endpoints: z.array(EndpointOut),
};

/** A lifecycle step's answer: the finished run, or (still running after the bounded wait) the workflow to wait for. */
export const LifecycleOut = {
  api_id: z.string(),
  action: z.enum(['verify', 'publish', 'unpublish']).optional(),
  status: z.enum(['draft', 'live', 'running']),
  verification: Loose.nullable().optional(),
  done: z.literal(false).optional(),
  workflow_id: z.string().optional(),
  run_id: z.string().optional(),
};

// ---- create's arguments: the REST body, field by field, described for a model --------------------------------------

const create = CreateApiBody.shape;
export const CreateFields = z
  .object({
    name: create.name,
    slug: create.slug,
    summary: create.summary,
    base_url: create.base_url.describe('Upstream base URL; endpoint paths are appended.'),
    description: create.description,
    tags: create.tags,
    category: create.category,
    examples: create.examples.describe('Questions this API answers (searched).'),
    docs_url: create.docs_url,
    endpoints: create.endpoints.describe(
      'price_cents: integer cents per call (0 = free, default); overrides imported operations.',
    ),
    import_from: create.import_from,
  })
  .strict();

export const update = UpdateApiBody.shape;
export const credentials = CredentialsBody.shape;
