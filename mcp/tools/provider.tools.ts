/**
 * Provider tools: a provider's own listings over their whole lifecycle, analytics and Connect onboarding. Each calls
 * the same core function as its route in api/routes/provider.routes.ts, needs `provider:write` (checked per call)
 * and answers that route's `data`; another org's `api_id` is the same 404 `not_found` as over REST.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { requireScope } from '../../core/auth/scopes.js';
import { ValidationError } from '../../core/errors.js';
import { Pagination } from '../../core/pagination.js';
import { AnalyticsQuery } from '../../core/providers/analytics.service.js';
import { lifecycleView } from '../../core/providers/providers.service.js';
import {
  CreateApiBody,
  CredentialsBody,
  PricingBody,
  PublishBody,
  UpdateApiBody,
} from '../../core/providers/providers.schemas.js';
import type { Services } from '../../core/services.js';
import type { ToolContext } from '../tool-context.js';
import { runTool } from './tool-result.js';
import { dataOrError, PageInfoShape, parseArgs, withNote } from './tool-schemas.js';

// ---- shared argument and output shapes ---------------------------------------------------------------------------

export const ApiId = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .describe('The listing’s id (`api_…`), as provider_list_apis or provider_create_api return it.');

const NullableString = z.string().nullable();
const Loose = z.looseObject({});

const EndpointOut = z.looseObject({
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

const SummaryOut = {
  api_id: z.string(),
  name: z.string(),
  slug: z.string(),
  summary: z.string(),
  status: z.enum(['draft', 'live']),
  verification_status: z.string(),
  published_at: NullableString,
  updated_at: z.string(),
};

const CredentialOut = {
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
const LifecycleOut = {
  api_id: z.string(),
  action: z.enum(['verify', 'publish', 'unpublish']).optional(),
  status: z.enum(['draft', 'live', 'running']),
  verification: Loose.nullable().optional(),
  done: z.literal(false).optional(),
  workflow_id: z.string().optional(),
  run_id: z.string().optional(),
};

const RUNNING_NOTE =
  'The run is still going (status "running"); it finishes on its own. Read the listing with provider_get_api in a ' +
  'few seconds to see its status and verification.';

const lifecycleNote = (data: { status: string }) => (data.status === 'running' ? RUNNING_NOTE : null);

// ---- create's arguments: the REST body, field by field, described for a model --------------------------------------

const create = CreateApiBody.shape;
const CreateFields = z
  .object({
    name: create.name.describe('Display name, 1-100 characters.'),
    slug: create.slug.describe(
      'Unique URL name: 1-64 lower-case letters, digits or inner hyphens. Consumers call `/v1/proxy/{slug}/…`.',
    ),
    summary: create.summary.describe('One line (1-300 characters) shown in search results.'),
    base_url: create.base_url.describe(
      'The upstream’s base URL (http or https, no query or fragment); endpoint paths are appended to it.',
    ),
    description: create.description.describe('Longer description, up to 5000 characters.'),
    tags: create.tags.describe('Up to 20 labels of up to 40 characters (lower-cased, duplicates dropped).'),
    category: create.category.describe('A category slug from get_categories (GET /v1/categories), or null.'),
    examples: create.examples.describe('Up to 20 questions this API answers (search weighs them highly).'),
    docs_url: create.docs_url.describe('Link to the upstream’s own documentation (shown, never fetched).'),
    endpoints: create.endpoints.describe(
      'Endpoints: `method`, `path` (`/forecast/{city}`), optional `summary`, `price_cents` (integer cents per call, ' +
        '0 = free; default 0), `input_schema`, `output_schema` (JSON Schema). Imported operations with the same ' +
        'method and path are overridden by these.',
    ),
    import_from: create.import_from.describe(
      '`{ type: "openapi_url" | "external_url", url }`, the same as the openapi_url / external_url arguments.',
    ),
  })
  .strict();

const update = UpdateApiBody.shape;
const credentials = CredentialsBody.shape;

/** The tools' definitions, built once per process (each session registers them with its own handlers). */
const DEFS = {
  provider_list_apis: {
    title: 'List my APIs',
    description:
      'List the APIs your organization provides, draft and live, oldest first, with their status, endpoint count ' +
      'and verification status. Use it to find an `api_id` for the other provider_* tools. Read-only. Needs the ' +
      '`provider:write` scope (a key gets it when its email is verified).',
    inputSchema: z
      .object({
        limit: Pagination.shape.limit.describe('At most this many (1-200, default 50).'),
        offset: Pagination.shape.offset.describe('Skip this many (default 0).'),
      })
      .strict(),
    outputSchema: dataOrError({
      items: z.array(z.looseObject({ ...SummaryOut, endpoint_count: z.number().int() })),
      pagination: PageInfoShape,
    }),
    annotations: {
      title: 'List my APIs',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  provider_get_api: {
    title: 'Get one of my APIs',
    description:
      'One of your own APIs in full: metadata, status, whether an upstream credential is set (never the secret), ' +
      'the latest verification evidence, and every endpoint with its `endpoint_id`, price, scheduled price ' +
      'increase and discount. Read-only. Needs `provider:write`.',
    inputSchema: z.object({ api_id: ApiId }).strict(),
    outputSchema: dataOrError(ProviderApiOut),
    annotations: {
      title: 'Get one of my APIs',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  provider_create_api: {
    title: 'Create or import an API',
    description:
      'Create a new API listing as a draft (nothing is public until provider_publish). Put the listing in `body` ' +
      '(name, slug, summary and base_url are required, as for POST /v1/provider/apis). To import the endpoints ' +
      'from an OpenAPI 3.0/3.1 document, also give `openapi_url` (the server fetches it once, at most 5 MB); to ' +
      'link an external documentation page instead, give `external_url`. Free: creating costs nothing. A slug ' +
      'already taken answers 409 `conflict`. Next steps: provider_set_credentials, provider_set_pricing, ' +
      'provider_verify, provider_publish. Needs `provider:write`.',
    inputSchema: z
      .object({
        openapi_url: z
          .string()
          .trim()
          .min(1)
          .max(2000)
          .optional()
          .describe('URL of an OpenAPI 3.0 or 3.1 document (JSON or YAML) to import endpoints and schemas from.'),
        external_url: z
          .string()
          .trim()
          .min(1)
          .max(2000)
          .optional()
          .describe('URL of the upstream’s documentation page, recorded as the import source and docs link.'),
        body: CreateFields.optional().describe(
          'The listing: name, slug, summary, base_url (required), and optionally description, tags, category, ' +
            'examples, docs_url, endpoints, import_from.',
        ),
      })
      .strict(),
    outputSchema: dataOrError(ProviderApiOut),
    annotations: {
      title: 'Create or import an API',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    },
  },
  provider_update_api: {
    title: 'Update an API’s metadata',
    description:
      'Change the metadata of one of your APIs (draft or live): name, summary, description, tags, category, ' +
      'examples, base_url, docs_url. Send only the fields to change; each replaces the previous value (a live ' +
      'listing changes at once). A new base_url resets the verification. Endpoints and prices are changed with ' +
      'provider_set_pricing. Needs `provider:write`.',
    inputSchema: z
      .object({
        api_id: ApiId,
        name: update.name.describe('Display name, 1-100 characters.'),
        summary: update.summary.describe('One line, 1-300 characters.'),
        description: update.description.describe('Longer description (up to 5000 characters), or null.'),
        tags: update.tags.describe('The full new list of tags: up to 20, each up to 40 characters (lower-cased).'),
        category: update.category.describe('A category slug from get_categories, or null for none.'),
        examples: update.examples.describe('The full new list of example questions (up to 20).'),
        base_url: update.base_url.describe('New upstream base URL; the listing must be verified again.'),
        docs_url: update.docs_url.describe('Documentation link, or null.'),
      })
      .strict(),
    outputSchema: dataOrError(ProviderApiOut),
    annotations: {
      title: 'Update an API’s metadata',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  provider_set_credentials: {
    title: 'Set the upstream credential',
    description:
      'Store the secret the gateway attaches to every call it forwards to your upstream (encrypted at rest, never ' +
      'shown again), replacing any previous one. `injection`: `bearer` (default, Authorization: Bearer), ' +
      '`header` or `query` (with `injection_name`), or `basic` (secret "user:password"). Needs `provider:write`.',
    inputSchema: z
      .object({
        api_id: ApiId,
        secret: credentials.secret.describe('The upstream API key or token (1-4096 characters).'),
        injection: credentials.injection.describe(
          'How the secret is attached: bearer (default), header, query, basic.',
        ),
        injection_name: credentials.injection_name.describe(
          'Header or query parameter name; required when injection is header or query.',
        ),
      })
      .strict(),
    outputSchema: dataOrError(CredentialOut),
    annotations: {
      title: 'Set the upstream credential',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  provider_set_pricing: {
    title: 'Set prices and discounts',
    description:
      'Set per-call prices (integer cents, 0 = free) and discounts of your endpoints, by `endpoint_id` ' +
      '(from provider_get_api). On a draft every change applies at once. On a live listing a decrease or a ' +
      'discount applies to the next call, while an increase is scheduled after the notice period (shown as ' +
      '`price_increase`; cancel it with provider_cancel_pending_pricing). A discount is `{ percent | amount_cents, ' +
      'starts_at?, ends_at?, label? }`; null removes it. Needs `provider:write`.',
    inputSchema: z
      .object({
        api_id: ApiId,
        endpoints: PricingBody.shape.endpoints.describe(
          'One entry per endpoint to change: `endpoint_id` and `price_cents` and/or `discount`.',
        ),
      })
      .strict(),
    outputSchema: dataOrError({ endpoints: z.array(EndpointOut) }),
    annotations: {
      title: 'Set prices and discounts',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
  },
  provider_verify: {
    title: 'Verify the upstream',
    description:
      'Run the upstream smoke test: the server calls a few of your endpoints (simple GETs first) with the stored ' +
      'credential, like a consumer would, and records the evidence (status codes, latency) on the listing. ' +
      'Does not change the listing’s status. Usually answers within seconds; if the run takes longer the answer ' +
      'says "running" and provider_get_api shows the result later. Needs `provider:write`.',
    inputSchema: z.object({ api_id: ApiId }).strict(),
    outputSchema: dataOrError(LifecycleOut),
    annotations: {
      title: 'Verify the upstream',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    },
  },
  provider_publish: {
    title: 'Publish an API',
    description:
      'Make one of your draft APIs live in the public catalog, where consumers can find it and call it through ' +
      'the gateway (paid endpoints earn you money per call). You must send `accept_terms: true` (accepting the ' +
      'marketplace’s provider terms); otherwise 400 `validation_failed`. The upstream smoke test runs first ' +
      'unless `skip_verify` is true; a failed test answers 422 `verification_failed` and the API stays a draft. ' +
      'Publishing a live API changes nothing. Needs `provider:write`.',
    inputSchema: z
      .object({
        api_id: ApiId,
        accept_terms: z
          .boolean()
          .optional()
          .describe('Must be true: you accept the marketplace’s provider terms for this listing.'),
        skip_verify: z.boolean().optional().describe('Publish without running the upstream smoke test first.'),
      })
      .strict(),
    outputSchema: dataOrError(LifecycleOut),
    annotations: {
      title: 'Publish an API',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    },
  },
  provider_unpublish: {
    title: 'Unpublish an API',
    description:
      'Take one of your live APIs out of the catalog and back to draft: it disappears from search and consumers’ ' +
      'calls through the gateway stop working. Nothing is deleted; provider_publish brings it back. An API that ' +
      'is already a draft is left as is. Needs `provider:write`.',
    inputSchema: z.object({ api_id: ApiId }).strict(),
    outputSchema: dataOrError(LifecycleOut),
    annotations: {
      title: 'Unpublish an API',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  provider_cancel_pending_pricing: {
    title: 'Cancel a scheduled price increase',
    description:
      'Cancel the scheduled price increase of one endpoint of your live API (the one provider_set_pricing ' +
      'scheduled); the current price stays. An endpoint with no scheduled increase answers 404 `not_found`. ' +
      'Needs `provider:write`.',
    inputSchema: z
      .object({
        api_id: ApiId,
        endpoint_id: z.string().trim().min(1).max(100).describe('The endpoint’s id (`ep_…`), from provider_get_api.'),
      })
      .strict(),
    outputSchema: dataOrError(EndpointOut.shape),
    annotations: {
      title: 'Cancel a scheduled price increase',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  provider_analytics: {
    title: 'Provider analytics',
    description:
      'Your APIs’ calls and GMV (from usage), your earnings, platform fees and payouts (from your ledger), per API ' +
      'and in total, over a range (default the last 30 days), plus the catalog requests consumers made that no ' +
      'API answers yet. Read-only. Needs `provider:write`.',
    inputSchema: z
      .object({
        from: AnalyticsQuery.shape.from.describe('Start: an ISO date (2026-01-31) or instant; default 30 days ago.'),
        to: AnalyticsQuery.shape.to.describe('End: an ISO date (inclusive) or instant; default now.'),
      })
      .strict(),
    outputSchema: dataOrError({
      range: z.looseObject({ from: z.string(), to: z.string() }),
      totals: z.looseObject({
        calls: z.number().int(),
        successful_calls: z.number().int(),
        gmv_cents: z.number().int(),
        provider_earnings_cents: z.number().int(),
        platform_fee_cents: z.number().int(),
        net_earnings_cents: z.number().int(),
        payouts_cents: z.number().int(),
      }),
      by_api: z.array(Loose),
      open_api_requests: z.array(Loose),
    }),
    annotations: {
      title: 'Provider analytics',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  provider_connect_onboard: {
    title: 'Start payout onboarding',
    description:
      'Get a Stripe Connect onboarding link so you can be paid out. The first call creates your connected account; ' +
      'each call returns a fresh link (`url`, valid for a few minutes). A PERSON must open `url` in a browser and ' +
      'complete Stripe’s identity verification: an agent cannot do it. Give them the URL. Payouts start once ' +
      'Stripe confirms (the status then becomes "enabled"). Needs `provider:write`.',
    inputSchema: z.object({}).strict(),
    outputSchema: dataOrError({
      url: z.string(),
      account_id: z.string(),
      status: z.string(),
      expires_at: NullableString,
      workflow_id: z.string(),
    }),
    annotations: {
      title: 'Start payout onboarding',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    },
  },
};

export function registerProviderTools(server: McpServer, services: Services, ctx: ToolContext): void {
  const { providers } = services;
  /** Every provider tool: `provider:write` first, then the body. */
  const run = (fn: () => Promise<Record<string, unknown>>) =>
    runTool(ctx.log, () => {
      requireScope(ctx.principal, 'provider:write');
      return fn();
    });

  server.registerTool('provider_list_apis', DEFS.provider_list_apis, (args) =>
    run(async () => ({
      ...(await providers.list(ctx.principal, parseArgs(Pagination.strict(), args))),
    })),
  );

  server.registerTool('provider_get_api', DEFS.provider_get_api, ({ api_id }) =>
    run(async () => ({ ...(await providers.get(ctx.principal, api_id)) })),
  );

  server.registerTool('provider_create_api', DEFS.provider_create_api, ({ openapi_url, external_url, body }) =>
    run(async () => {
      const sources = [openapi_url, external_url, body?.import_from].filter((s) => s !== undefined);
      if (sources.length > 1) {
        throw new ValidationError('Give at most one of openapi_url, external_url and body.import_from.', {
          details: { field: 'openapi_url' },
        });
      }
      const import_from = openapi_url
        ? { type: 'openapi_url', url: openapi_url }
        : external_url
          ? { type: 'external_url', url: external_url }
          : body?.import_from;
      const parsed = parseArgs(CreateApiBody, { ...body, ...(import_from ? { import_from } : {}) }, 'body');
      return { ...(await providers.create(ctx.principal, parsed)) };
    }),
  );

  server.registerTool('provider_update_api', DEFS.provider_update_api, ({ api_id, ...fields }) =>
    run(async () => ({ ...(await providers.update(ctx.principal, api_id, parseArgs(UpdateApiBody, fields))) })),
  );

  server.registerTool('provider_set_credentials', DEFS.provider_set_credentials, ({ api_id, ...fields }) =>
    run(async () => ({
      ...(await providers.setCredentials(ctx.principal, api_id, parseArgs(CredentialsBody, fields))),
    })),
  );

  server.registerTool('provider_set_pricing', DEFS.provider_set_pricing, ({ api_id, endpoints }) =>
    run(async () => ({
      ...(await providers.updatePricing(ctx.principal, api_id, parseArgs(PricingBody, { endpoints }))),
    })),
  );

  server.registerTool('provider_verify', DEFS.provider_verify, async ({ api_id }) => {
    const result = await run(async () => ({
      ...lifecycleView(api_id, await providers.verify(ctx.principal, api_id)),
    }));
    return withNote(result, lifecycleNote(result.structuredContent as { status: string }));
  });

  server.registerTool('provider_publish', DEFS.provider_publish, async ({ api_id, accept_terms, skip_verify }) => {
    const result = await run(async () => {
      const body = parseArgs(PublishBody, { accept_terms, skip_verify });
      return { ...lifecycleView(api_id, await providers.publish(ctx.principal, api_id, body)) };
    });
    return withNote(result, lifecycleNote(result.structuredContent as { status: string }));
  });

  server.registerTool('provider_unpublish', DEFS.provider_unpublish, async ({ api_id }) => {
    const result = await run(async () => ({
      ...lifecycleView(api_id, await providers.unpublish(ctx.principal, api_id)),
    }));
    return withNote(result, lifecycleNote(result.structuredContent as { status: string }));
  });

  server.registerTool(
    'provider_cancel_pending_pricing',
    DEFS.provider_cancel_pending_pricing,
    ({ api_id, endpoint_id }) =>
      run(async () => ({ ...(await providers.cancelPendingPrice(ctx.principal, api_id, endpoint_id)) })),
  );

  server.registerTool('provider_analytics', DEFS.provider_analytics, (args) =>
    run(async () => ({ ...(await services.analytics.provider(ctx.principal, parseArgs(AnalyticsQuery, args))) })),
  );

  server.registerTool('provider_connect_onboard', DEFS.provider_connect_onboard, async () => {
    const result = await run(async () => ({ ...(await services.connect.onboard(ctx.principal)) }));
    const url = (result.structuredContent as { url?: string } | undefined)?.url;
    return withNote(
      result,
      url && `A person must open this link in a browser to verify their identity with Stripe: ${url}`,
    );
  });
}
