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
import { lifecycleView } from '../../core/providers/lifecycle.service.js';
import {
  CreateApiBody,
  CredentialsBody,
  PricingBody,
  PublishBody,
  UpdateApiBody,
} from '../../core/providers/providers.schemas.js';
import type { Services } from '../../platform/services.js';
import type { ToolContext } from '../tool-context.js';
import { moneyMeta } from '../tool-listing.js';
import { runTool } from './tool-result.js';
import { dataOrError, PageInfoShape, parseArgs, withNote } from './tool-schemas.js';

// ---- shared argument and output shapes ---------------------------------------------------------------------------

export const ApiId = z.string().trim().min(1).max(100);

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

const update = UpdateApiBody.shape;
const credentials = CredentialsBody.shape;

/** The tools' definitions, built once per process (each session registers them with its own handlers). */
const DEFS = {
  provider_list_apis: {
    title: 'List my APIs',
    description:
      'Your APIs (draft and live) with status and endpoint count: find an `api_id` here. Needs provider:write.',
    inputSchema: z
      .object({
        limit: Pagination.shape.limit,
        offset: Pagination.shape.offset,
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
      'One of your APIs in full: status, credential set or not, verification, endpoints with `endpoint_id`, price, ' +
      'scheduled increase, discount. Needs provider:write.',
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
      'Create a draft API listing from `body` (name, slug, summary, base_url required); `openapi_url` imports ' +
      'endpoints from an OpenAPI document (fetched once). Then set credentials and pricing, verify, publish. Needs ' +
      'provider:write.',
    inputSchema: z
      .object({
        openapi_url: z
          .string()
          .trim()
          .min(1)
          .max(2000)
          .optional()
          .describe('OpenAPI 3.0/3.1 document (JSON or YAML) to import.'),
        external_url: z
          .string()
          .trim()
          .min(1)
          .max(2000)
          .optional()
          .describe('Documentation page, recorded as the source.'),
        body: CreateFields.optional(),
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
      "Change your API's metadata; only the fields sent are replaced. A new base_url needs verifying again. Needs " +
      'provider:write.',
    inputSchema: z
      .object({
        api_id: ApiId,
        name: update.name,
        summary: update.summary,
        description: update.description,
        tags: update.tags.describe('Replaces the list.'),
        category: update.category,
        examples: update.examples.describe('Replaces the list.'),
        base_url: update.base_url,
        docs_url: update.docs_url,
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
      'Store the secret the gateway adds to calls to your upstream (encrypted, never shown), replacing the old ' +
      'one. Needs provider:write.',
    inputSchema: z
      .object({
        api_id: ApiId,
        secret: credentials.secret,
        injection: credentials.injection.describe('basic: secret is "user:password".'),
        injection_name: credentials.injection_name.describe('Required for header and query.'),
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
      "Set your endpoints' prices (integer cents per call, 0 = free) and discounts by `endpoint_id`. On a live API " +
      'an increase is scheduled after the notice period; decreases apply at once. Needs provider:write.',
    inputSchema: z
      .object({
        api_id: ApiId,
        endpoints: PricingBody.shape.endpoints.describe(
          'discount: {percent | amount_cents, starts_at?, ends_at?, label?}; null removes.',
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
      'Smoke-test your upstream (a few GETs with the stored credential) and record the evidence on the listing. ' +
      'Needs provider:write.',
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
      'Make your draft API live. `accept_terms: true` is required; the smoke test runs first unless `skip_verify`. ' +
      'Needs provider:write.',
    inputSchema: z
      .object({
        api_id: ApiId,
        accept_terms: z.boolean().optional().describe('Must be true: you accept the provider terms.'),
        skip_verify: z.boolean().optional(),
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
      'Take your live API back to draft: it leaves search and gateway calls stop. Nothing is deleted. Needs ' +
      'provider:write.',
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
    description: "Cancel an endpoint's scheduled price increase; the current price stays. Needs provider:write.",
    inputSchema: z
      .object({
        api_id: ApiId,
        endpoint_id: z.string().trim().min(1).max(100),
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
      "Your APIs' calls, GMV, earnings, fees and payouts per API and in total (default: last 30 days), and unmet " +
      'consumer requests. Needs provider:write.',
    inputSchema: z
      .object({
        from: AnalyticsQuery.shape.from,
        to: AnalyticsQuery.shape.to.describe('Inclusive date, or instant.'),
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
      'A Stripe Connect onboarding link (`url`, free). MOVES MONEY: once a person opens it and verifies their ' +
      'identity, your earnings are paid out to that account; give them the URL. Needs provider:write.',
    inputSchema: z.object({}).strict(),
    outputSchema: dataOrError({
      url: z.string(),
      account_id: z.string(),
      status: z.string(),
      expires_at: NullableString,
      workflow_id: z.string(),
    }),
    _meta: moneyMeta('free; your earnings are then paid out (provider_analytics shows them)'),
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
  const { providers, providerLifecycle, providerCredentials, priceChanges } = services;
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
      ...(await providerCredentials.setCredentials(ctx.principal, api_id, parseArgs(CredentialsBody, fields))),
    })),
  );

  server.registerTool('provider_set_pricing', DEFS.provider_set_pricing, ({ api_id, endpoints }) =>
    run(async () => ({
      ...(await priceChanges.updatePricing(ctx.principal, api_id, parseArgs(PricingBody, { endpoints }))),
    })),
  );

  server.registerTool('provider_verify', DEFS.provider_verify, async ({ api_id }) => {
    const result = await run(async () => ({
      ...lifecycleView(api_id, await providerLifecycle.verify(ctx.principal, api_id)),
    }));
    return withNote(result, lifecycleNote(result.structuredContent as { status: string }));
  });

  server.registerTool('provider_publish', DEFS.provider_publish, async ({ api_id, accept_terms, skip_verify }) => {
    const result = await run(async () => {
      const body = parseArgs(PublishBody, { accept_terms, skip_verify });
      return { ...lifecycleView(api_id, await providerLifecycle.publish(ctx.principal, api_id, body)) };
    });
    return withNote(result, lifecycleNote(result.structuredContent as { status: string }));
  });

  server.registerTool('provider_unpublish', DEFS.provider_unpublish, async ({ api_id }) => {
    const result = await run(async () => ({
      ...lifecycleView(api_id, await providerLifecycle.unpublish(ctx.principal, api_id)),
    }));
    return withNote(result, lifecycleNote(result.structuredContent as { status: string }));
  });

  server.registerTool(
    'provider_cancel_pending_pricing',
    DEFS.provider_cancel_pending_pricing,
    ({ api_id, endpoint_id }) =>
      run(async () => ({ ...(await priceChanges.cancelPendingPrice(ctx.principal, api_id, endpoint_id)) })),
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
