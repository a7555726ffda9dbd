/**
 * The provider tools' definitions (title, description, input and output schemas, money metadata, annotations): what
 * tools/list shows. provider.tools.ts registers them with their handlers.
 */
import { z } from 'zod';
import { Pagination } from '../../core/pagination.js';
import { AnalyticsQuery } from '../../core/providers/analytics.service.js';
import { ConnectOnboardView } from '../../core/billing/billing.schemas.js';
import { EndpointView, PricingView } from '../../core/pricing/pricing.schemas.js';
import {
  AnalyticsView,
  CredentialView,
  PricingBody,
  ProviderApiSummary,
  ProviderApiView,
} from '../../core/providers/providers.schemas.js';
import { moneyMeta } from '../tool-listing.js';
import { ApiId, CreateFields, credentials, EndpointChangeArgs, LifecycleOut, update } from './provider-tool-shapes.js';
import { EndpointChangesView } from '../../core/providers/endpoint-changes.schemas.js';
import { DeletedApiView } from '../../core/providers/providers.schemas.js';
import { dataOrError, PageInfoShape } from './tool-schemas.js';

/** The tools' definitions, built once per process (each session registers them with its own handlers). */
export const DEFS = {
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
      items: z.array(ProviderApiSummary),
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
    outputSchema: dataOrError(ProviderApiView),
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
    outputSchema: dataOrError(ProviderApiView),
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
    outputSchema: dataOrError(ProviderApiView),
    annotations: {
      title: 'Update an API’s metadata',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  provider_change_endpoints: {
    title: 'Change endpoints',
    description:
      'Add, change (by endpoint_id; new method/path = new endpoint) or remove endpoints, or re-import from ' +
      'openapi_url. Draft: applies now. Live: staged in its open revision (only api_id shows it) until ' +
      'provider_publish or discard_revision; removals wait the price-increase notice, then 410.',
    inputSchema: z.object({ api_id: ApiId, ...EndpointChangeArgs }).strict(),
    outputSchema: dataOrError(EndpointChangesView),
    annotations: {
      title: 'Change endpoints',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    },
  },
  provider_retire_api: {
    title: 'Archive, restore or delete an API',
    description:
      'delete: a never-live draft. archive: a draft (unpublish first): 410 for callers, history and slug kept. ' +
      'restore: back to draft.',
    inputSchema: z.object({ api_id: ApiId, action: z.enum(['archive', 'restore', 'delete']) }).strict(),
    outputSchema: dataOrError(ProviderApiView.partial().extend(DeletedApiView.partial().shape)),
    annotations: {
      title: 'Archive, restore or delete an API',
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
    outputSchema: dataOrError(CredentialView),
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
    outputSchema: dataOrError(PricingView),
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
      'Make your draft API live, or a live API’s open revision. `accept_terms: true` is required; the smoke test ' +
      'runs first unless `skip_verify`. Needs provider:write.',
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
    outputSchema: dataOrError(EndpointView),
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
    outputSchema: dataOrError(AnalyticsView),
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
    outputSchema: dataOrError(ConnectOnboardView),
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
