/**
 * Provider tools: a provider's own listings over their whole lifecycle, analytics and Connect onboarding. Each calls
 * the same core function as its route in api/routes/provider.routes.ts, needs `provider:write` (checked per call)
 * and answers that route's `data`; another org's `api_id` is the same 404 `not_found` as over REST. The definitions
 * are in provider-tool-defs.ts, their shapes in provider-tool-shapes.ts.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
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
import { EndpointChangesBody, ImportEndpointsBody } from '../../core/providers/endpoint-changes.schemas.js';
import type { Services } from '../../platform/services.js';
import type { ToolContext } from '../tool-context.js';
import { withPersonSteps } from '../elicitation.js';
import { connectSteps } from '../person-steps.js';
import { DEFS } from './provider-tool-defs.js';
import { runTool } from './tool-result.js';
import { parseArgs, withNote } from './tool-schemas.js';

const RUNNING_NOTE =
  'The run is still going (status "running"); it finishes on its own. Read the listing with provider_get_api in a ' +
  'few seconds to see its status and verification.';

const lifecycleNote = (data: { status: string }) => (data.status === 'running' ? RUNNING_NOTE : null);

/** Every provider tool: `provider:write` first, then the body. */
type Run = (fn: () => Promise<Record<string, unknown>>) => ReturnType<typeof runTool>;

/** provider_list_apis, provider_get_api, provider_create_api, provider_update_api. */
function registerListingTools(server: McpServer, services: Services, ctx: ToolContext, run: Run): void {
  const { providers } = services;
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
}

/** provider_change_endpoints, provider_retire_api: the same core functions as the endpoint and retirement routes. */
function registerChangeTools(server: McpServer, services: Services, ctx: ToolContext, run: Run): void {
  const { providerEndpoints, providerRetirement } = services;
  server.registerTool('provider_change_endpoints', DEFS.provider_change_endpoints, (args) =>
    run(async () => {
      const { api_id, add, update, remove, openapi_url, keep_missing, discard_revision } = args;
      const changes = add ?? update ?? remove;
      if ([changes, openapi_url, discard_revision].filter((v) => v !== undefined && v !== false).length > 1) {
        throw new ValidationError('Give add/update/remove, openapi_url or discard_revision, one kind per call.', {
          details: { field: 'openapi_url' },
        });
      }
      if (discard_revision) {
        const revision = await providerEndpoints.discardRevision(ctx.principal, api_id);
        const message = `Revision ${revision.number} discarded: nothing it staged was applied.`;
        return { api_id, staged: false, message, added: [], updated: [], removed: [], revision };
      }
      if (openapi_url) {
        const body = parseArgs(ImportEndpointsBody, { url: openapi_url, keep_missing });
        return { ...(await providerEndpoints.reimport(ctx.principal, api_id, body)) };
      }
      const request = parseArgs(EndpointChangesBody, { add, update, remove });
      return { ...(await providerEndpoints.change(ctx.principal, api_id, request)) };
    }),
  );

  server.registerTool('provider_retire_api', DEFS.provider_retire_api, ({ api_id, action }) =>
    run(async () => ({ ...(await providerRetirement[action](ctx.principal, api_id)) })),
  );
}

/** provider_set_credentials, provider_set_pricing. */
function registerSettingTools(server: McpServer, services: Services, ctx: ToolContext, run: Run): void {
  server.registerTool('provider_set_credentials', DEFS.provider_set_credentials, ({ api_id, ...fields }) =>
    run(async () => ({
      ...(await services.providerCredentials.setCredentials(ctx.principal, api_id, parseArgs(CredentialsBody, fields))),
    })),
  );

  server.registerTool('provider_set_pricing', DEFS.provider_set_pricing, ({ api_id, endpoints }) =>
    run(async () => ({
      ...(await services.priceChanges.updatePricing(ctx.principal, api_id, parseArgs(PricingBody, { endpoints }))),
    })),
  );
}

/** provider_verify, provider_publish, provider_unpublish: a workflow run, with a note while it is still running. */
function registerLifecycleTools(server: McpServer, services: Services, ctx: ToolContext, run: Run): void {
  server.registerTool('provider_verify', DEFS.provider_verify, async ({ api_id }) => {
    const result = await run(async () => ({
      ...lifecycleView(api_id, await services.providerLifecycle.verify(ctx.principal, api_id)),
    }));
    return withNote(result, lifecycleNote(result.structuredContent as { status: string }));
  });

  server.registerTool('provider_publish', DEFS.provider_publish, async ({ api_id, accept_terms, skip_verify }) => {
    const result = await run(async () => {
      const body = parseArgs(PublishBody, { accept_terms, skip_verify });
      return { ...lifecycleView(api_id, await services.providerLifecycle.publish(ctx.principal, api_id, body)) };
    });
    return withNote(result, lifecycleNote(result.structuredContent as { status: string }));
  });

  server.registerTool('provider_unpublish', DEFS.provider_unpublish, async ({ api_id }) => {
    const result = await run(async () => ({
      ...lifecycleView(api_id, await services.providerLifecycle.unpublish(ctx.principal, api_id)),
    }));
    return withNote(result, lifecycleNote(result.structuredContent as { status: string }));
  });
}

/** provider_cancel_pending_pricing, provider_analytics, provider_connect_onboard. */
function registerMoneyTools(server: McpServer, services: Services, ctx: ToolContext, run: Run): void {
  server.registerTool(
    'provider_cancel_pending_pricing',
    DEFS.provider_cancel_pending_pricing,
    ({ api_id, endpoint_id }) =>
      run(async () => ({ ...(await services.priceChanges.cancelPendingPrice(ctx.principal, api_id, endpoint_id)) })),
  );

  server.registerTool('provider_analytics', DEFS.provider_analytics, (args) =>
    run(async () => ({ ...(await services.analytics.provider(ctx.principal, parseArgs(AnalyticsQuery, args))) })),
  );

  // Stripe's onboarding page becomes a URL elicitation when the client can show one (mcp/elicitation.ts).
  server.registerTool(
    'provider_connect_onboard',
    DEFS.provider_connect_onboard,
    withPersonSteps(server, 'provider_connect_onboard', services, ctx, connectSteps(services, ctx), async () => {
      const result = await run(async () => ({ ...(await services.connect.onboard(ctx.principal)) }));
      const url = (result.structuredContent as { url?: string } | undefined)?.url;
      return withNote(
        result,
        url && `A person must open this link in a browser to verify their identity with Stripe: ${url}`,
      );
    }),
  );
}

/** The provider tools, in the order tools/list shows them. */
export function registerProviderTools(server: McpServer, services: Services, ctx: ToolContext): void {
  const run: Run = (fn) =>
    runTool(ctx.log, () => {
      requireScope(ctx.principal, 'provider:write');
      return fn();
    });
  registerListingTools(server, services, ctx, run);
  registerChangeTools(server, services, ctx, run);
  registerSettingTools(server, services, ctx, run);
  registerLifecycleTools(server, services, ctx, run);
  registerMoneyTools(server, services, ctx, run);
}
