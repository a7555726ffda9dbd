/**
 * Inputs of the provider routes and tools (zod, strict: unknown fields are refused), and their responses' `data`.
 */
import { z } from 'zod';
import {
  API_SOURCES,
  API_STATUSES,
  CONNECT_STATUSES,
  DOCUMENT_KINDS,
  ENDPOINT_METHODS,
  INJECTIONS,
  VERIFICATION_STATUSES,
} from '../../db/entities/index.js';
import { ApiRequestView } from '../demand/demand.schemas.js';
import { Cents } from '../money/cents.js';
import { EndpointView } from '../pricing/pricing.schemas.js';
import { UpstreamProblem } from '../upstream/upstream.schemas.js';

export const API_SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const Slug = z.string().trim().regex(API_SLUG, 'must be 1-64 lower-case letters, digits or inner hyphens');

const MAX_SCHEMA_BYTES = 64 * 1024;
export const JsonSchemaInput = z
  .record(z.string(), z.unknown())
  .refine((v) => JSON.stringify(v).length <= MAX_SCHEMA_BYTES, `must be at most ${MAX_SCHEMA_BYTES} bytes of JSON`);

/** `/forecast/{city}`: starts with `/`, no `..` segments, `{name}` parameters only, URL-safe characters. */
export const PathTemplate = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .regex(/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/{}-]*$/, 'must start with / and use URL path characters')
  .refine((p) => !p.split('/').some((seg) => seg === '..' || seg === '.'), 'must not contain . or .. segments')
  .refine((p) => /^(?:[^{}]|\{[A-Za-z_][A-Za-z0-9_]*\})*$/.test(p), 'parameters must look like {name}');

export const EndpointInput = z
  .object({
    method: z
      .string()
      .transform((m) => m.toUpperCase())
      .pipe(z.enum(ENDPOINT_METHODS)),
    path: PathTemplate,
    summary: z.string().trim().max(200).nullable().optional(),
    price_cents: Cents.optional(),
    input_schema: JsonSchemaInput.nullable().optional(),
    output_schema: JsonSchemaInput.nullable().optional(),
  })
  .strict();
export type EndpointInput = z.infer<typeof EndpointInput>;

export const LISTING_LIMITS = { tags: 20, tagChars: 40, examples: 20, exampleChars: 300 } as const;

/** Free-form labels: lower-cased and de-duplicated (first spelling kept), at most 20 of at most 40 characters. */
const Tags = z
  .array(z.string().trim().toLowerCase().min(1).max(LISTING_LIMITS.tagChars))
  .max(LISTING_LIMITS.tags)
  .transform((tags) => [...new Set(tags)]);
/** Natural-language questions the API answers (search weighs them highly); de-duplicated. */
const Examples = z
  .array(z.string().trim().min(1).max(LISTING_LIMITS.exampleChars))
  .max(LISTING_LIMITS.examples)
  .transform((examples) => [...new Set(examples)]);
const UrlString = z.string().trim().min(1).max(2000);

export const CreateApiBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    slug: Slug,
    summary: z.string().trim().min(1).max(300),
    base_url: UrlString,
    description: z.string().trim().max(5000).nullable().optional(),
    tags: Tags.optional(),
    /** A slug of the category taxonomy (GET /v1/categories); checked against it by the service. */
    category: Slug.nullable().optional(),
    examples: Examples.optional(),
    docs_url: UrlString.nullable().optional(),
    endpoints: z.array(EndpointInput).max(500).optional(),
    import_from: z
      .object({ type: z.enum(['openapi_url', 'external_url']), url: UrlString })
      .strict()
      .optional(),
  })
  .strict()
  .refine(
    (b) => {
      const keys = (b.endpoints ?? []).map((e) => `${e.method} ${e.path}`);
      return new Set(keys).size === keys.length;
    },
    { message: 'endpoints must not repeat a method and path', path: ['endpoints'] },
  );
export type CreateApiBody = z.infer<typeof CreateApiBody>;

export const UpdateApiBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    summary: z.string().trim().min(1).max(300),
    description: z.string().trim().max(5000).nullable(),
    tags: Tags,
    category: Slug.nullable(),
    examples: Examples,
    base_url: UrlString,
    docs_url: UrlString.nullable(),
  })
  .partial()
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'send at least one field to change');
export type UpdateApiBody = z.infer<typeof UpdateApiBody>;

/** Header names and query parameter names: RFC 7230 token characters. */
const InjectionName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a valid header or parameter name');

export const CredentialsBody = z
  .object({
    secret: z.string().min(1).max(4096),
    injection: z.enum(INJECTIONS).default('bearer'),
    injection_name: InjectionName.nullable().optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    if ((b.injection === 'header' || b.injection === 'query') && !b.injection_name) {
      ctx.addIssue({
        code: 'custom',
        path: ['injection_name'],
        message: `is required when injection is "${b.injection}"`,
      });
    }
    if (
      b.injection === 'header' &&
      b.injection_name &&
      /^(host|content-length|transfer-encoding|connection)$/i.test(b.injection_name)
    ) {
      ctx.addIssue({ code: 'custom', path: ['injection_name'], message: 'cannot be a hop-by-hop or framing header' });
    }
    if (b.injection === 'basic' && !b.secret.includes(':')) {
      ctx.addIssue({ code: 'custom', path: ['secret'], message: 'must be "user:password" for basic injection' });
    }
  });
export type CredentialsBody = z.infer<typeof CredentialsBody>;

/** Publish: `acceptTerms`/`accept_terms` must be true; `skipVerify`/`skip_verify` optional (both spellings). */
export const PublishBody = z
  .object({
    acceptTerms: z.boolean().optional(),
    accept_terms: z.boolean().optional(),
    skipVerify: z.boolean().optional(),
    skip_verify: z.boolean().optional(),
  })
  .strict()
  .transform((b) => ({
    acceptTerms: b.acceptTerms ?? b.accept_terms ?? false,
    skipVerify: b.skipVerify ?? b.skip_verify ?? false,
  }));
export type PublishBody = z.infer<typeof PublishBody>;

const IsoInstant = z.iso.datetime({ offset: true });

export const DiscountInput = z
  .object({
    percent: z.number().int().min(1).max(100).optional(),
    amount_cents: Cents.min(1).optional(),
    starts_at: IsoInstant.nullable().optional(),
    ends_at: IsoInstant.nullable().optional(),
    label: z.string().trim().max(60).nullable().optional(),
  })
  .strict()
  .refine(
    (d) => (d.percent === undefined) !== (d.amount_cents === undefined),
    'give exactly one of percent or amount_cents',
  )
  .refine(
    (d) => !d.starts_at || !d.ends_at || Date.parse(d.ends_at) > Date.parse(d.starts_at),
    'ends_at must be after starts_at',
  );
export type DiscountInput = z.infer<typeof DiscountInput>;

export const PricingBody = z
  .object({
    endpoints: z
      .array(
        z
          .object({
            endpoint_id: z.string().max(40),
            price_cents: Cents.optional(),
            discount: DiscountInput.nullable().optional(),
          })
          .strict()
          .refine((e) => e.price_cents !== undefined || e.discount !== undefined, 'give price_cents and/or discount'),
      )
      .min(1)
      .max(500)
      .refine((list) => new Set(list.map((e) => e.endpoint_id)).size === list.length, 'must not repeat an endpoint_id'),
  })
  .strict();
export type PricingBody = z.infer<typeof PricingBody>;

export const CreateDocumentBody = z
  .object({
    kind: z.enum(DOCUMENT_KINDS),
    source: z.literal('hosted').default('hosted'),
    version: z.string().trim().min(1).max(50),
    title: z.string().trim().max(200).nullable().optional(),
    body: z.string().min(1).max(200_000),
    api_id: z.string().max(40).nullable().optional(),
    acceptance_mode: z.enum(['required', 'optional']).default('optional'),
  })
  .strict();
export type CreateDocumentBody = z.infer<typeof CreateDocumentBody>;

export const ListDocumentsQuery = z
  .object({ api_id: z.string().max(40).optional(), kind: z.enum(DOCUMENT_KINDS).optional() })
  .strict();

export const AcceptTermsBody = z
  .object({
    document_id: z.string().max(40),
    content_hash: z.string().regex(/^[0-9a-f]{64}$/, 'must be the document’s SHA-256 (64 hex characters)'),
  })
  .strict();
export type AcceptTermsBody = z.infer<typeof AcceptTermsBody>;

// ---- Response `data` of the provider routes and tools (the OpenAPI document shares them) -------------------------

const NullableString = z.string().nullable();

/** The smoke test's evidence, as stored on the listing (db VerificationEvidence). */
export const VerificationEvidenceView = z.object({
  checked_at: z.string(),
  passed: z.boolean(),
  checks: z.array(
    z.object({
      endpoint_id: z.string(),
      method: z.string(),
      path: z.string(),
      status: z.number().int().nullable(),
      latency_ms: z.number().int().nullable(),
      ok: z.boolean(),
      error: NullableString,
      target: z.string().optional().describe('The host:port called.'),
    }),
  ),
});

/** One of the provider's listings in GET /v1/provider/apis (listing-views.ts summaryView). */
export const ProviderApiSummary = z.object({
  api_id: z.string(),
  name: z.string(),
  slug: z.string(),
  summary: z.string(),
  status: z.enum(API_STATUSES),
  endpoint_count: z.number().int(),
  verification_status: z.enum(VERIFICATION_STATUSES),
  published_at: NullableString.describe(
    'First publication; kept by unpublish (an ever-live API is archived, not deleted).',
  ),
  archived_at: NullableString,
  updated_at: z.string(),
});
export type ProviderApiSummary = z.infer<typeof ProviderApiSummary>;

/** The upstream credential's state (never the secret): PUT …/credentials answers it, the listing carries it. */
export const CredentialView = z.object({
  set: z.boolean(),
  injection: z.enum(INJECTIONS).nullable(),
  injection_name: NullableString,
  updated_at: NullableString,
});
export type CredentialView = z.infer<typeof CredentialView>;

/** One of the provider's listings in full (listing-views.ts listingView). */
export const ProviderApiView = ProviderApiSummary.omit({ endpoint_count: true }).extend({
  description: NullableString,
  tags: z.array(z.string()),
  category: NullableString,
  examples: z.array(z.string()),
  source: z.enum(API_SOURCES),
  base_url: z.string(),
  docs_url: NullableString,
  import_source: z
    .object({
      type: z.enum(['openapi_url', 'external_url']),
      url: z.string(),
      imported_at: z.string(),
      openapi_version: z.string().optional(),
      operations: z.number().int().optional(),
    })
    .nullable(),
  credential: CredentialView,
  verification: z.object({
    status: z.enum(VERIFICATION_STATUSES),
    result: VerificationEvidenceView.nullable(),
  }),
  listing_url: z.string(),
  gateway_url: z.string(),
  created_at: z.string(),
  endpoints: z.array(EndpointView),
  open_revision: z
    .object({
      revision_id: z.string(),
      number: z.number().int(),
      add: z.number().int(),
      update: z.number().int(),
      remove: z.number().int(),
    })
    .nullable()
    .describe('Staged endpoint changes of a live API (GET …/revision shows them; publish applies them).'),
});
export type ProviderApiView = z.infer<typeof ProviderApiView>;

/** DELETE /v1/provider/apis/{api_id}: a never-live draft, gone (its slug free again). */
export const DeletedApiView = z.object({ api_id: z.string(), slug: z.string(), deleted: z.literal(true) });
export type DeletedApiView = z.infer<typeof DeletedApiView>;

/** A lifecycle step (verify, publish, unpublish, a revision's publish) that finished: 200 over REST. */
export const LifecycleDoneView = z.object({
  api_id: z.string(),
  action: z.enum(['verify', 'publish', 'unpublish', 'publish_revision']),
  status: z.enum(API_STATUSES),
  message: z.string().describe('What happened, headed "Verification failed at host:port" when the smoke test failed.'),
  verification: VerificationEvidenceView.nullable(),
  revision_published: z.boolean().optional(),
});
/** A lifecycle step still running after the bounded wait: 202 over REST (the listing's status shows the end). */
export const LifecycleRunningView = z.object({
  api_id: z.string(),
  done: z.literal(false),
  workflow_id: z.string(),
  run_id: z.string(),
  status: z.literal('running'),
});
export const LifecycleView = z.union([LifecycleDoneView, LifecycleRunningView]);
export type LifecycleView = z.infer<typeof LifecycleView>;

const Counts = {
  calls: z.number().int(),
  successful_calls: z.number().int(),
  gmv_cents: z.number().int(),
};

/**
 * The provider's money to date, all time (earnings-to-date.ts): gross = fee + net, and net = paid out + reversed +
 * pending + available. Net earnings are credited to the org's balance as they are booked.
 */
export const EarningsToDateView = z.object({
  gross_cents: z.number().int(),
  platform_fee_cents: z.number().int(),
  net_cents: z.number().int(),
  paid_out_cents: z.number().int(),
  reversed_cents: z.number().int().describe('Taken back by chargebacks.'),
  pending_cents: z.number().int().describe('Not payable until the consumers’ card payments are collected.'),
  available_cents: z.number().int().describe('Payable, not yet paid out.'),
  balance_cents: z.number().int(),
  payouts: z.enum(CONNECT_STATUSES).describe('Stripe Connect onboarding: none, pending or enabled.'),
  where_earnings_go: z.string(),
});
export type EarningsToDateView = z.infer<typeof EarningsToDateView>;

/** GET /v1/provider/analytics (analytics.service.ts). */
export const AnalyticsView = z.object({
  range: z.object({ from: z.string(), to: z.string() }),
  totals: z.object({
    ...Counts,
    provider_earnings_cents: z.number().int(),
    platform_fee_cents: z.number().int(),
    net_earnings_cents: z.number().int(),
    payouts_cents: z.number().int(),
  }),
  by_api: z.array(
    z.object({
      api_id: z.string(),
      slug: z.string(),
      ...Counts,
      upstream_problem: UpstreamProblem.nullable(),
    }),
  ),
  earnings_to_date: EarningsToDateView,
  open_api_requests: z
    .array(ApiRequestView.pick({ query: true, votes: true, last_requested_at: true }))
    .describe('What consumers ask for and the catalog lacks: the most requested open API requests (no requester).'),
});
export type AnalyticsView = z.infer<typeof AnalyticsView>;
