/**
 * Profile tools: the public provider directory (GET /v1/providers, /v1/providers/{slug}) and the caller's own profile
 * (GET and PATCH /v1/me/profile), through the same core functions. The own-profile tools need `provider:write`.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { requireScope } from '../../core/auth/scopes.js';
import { OwnProfileView, ProviderDetail, ProviderListItem } from '../../core/profiles/profiles.schemas.js';
import { ProfilePatch } from '../../core/profiles/profiles.service.js';
import { ProvidersQuery } from '../../core/providers/provider-directory.service.js';
import type { Services } from '../../platform/services.js';
import type { ToolContext } from '../tool-context.js';
import { runTool } from './tool-result.js';
import { dataOrError, PageInfoShape, parseArgs } from './tool-schemas.js';

const patch = ProfilePatch.shape;

/** The tools' definitions, built once per process (each session registers them with its own handlers). */
const DEFS = {
  list_providers: {
    title: 'Providers',
    description: 'Provider directory: public profiles, trust badges, live API counts; `query` filters.',
    inputSchema: z
      .object({
        query: ProvidersQuery.shape.q,
        limit: ProvidersQuery.shape.limit,
        offset: ProvidersQuery.shape.offset,
      })
      .strict(),
    outputSchema: dataOrError({ items: z.array(ProviderListItem), pagination: PageInfoShape }),
    annotations: {
      title: 'Providers',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  get_provider_profile: {
    title: 'Provider profile',
    description: "One provider's public profile, 30-day stats and live APIs.",
    inputSchema: z
      .object({
        slug: z.string().trim().min(1).max(100),
      })
      .strict(),
    outputSchema: dataOrError(ProviderDetail),
    annotations: {
      title: 'Provider profile',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  get_my_profile: {
    title: 'My profile',
    description: "Your org's profile, with the private contact fields.",
    inputSchema: z.object({}).strict(),
    outputSchema: dataOrError(OwnProfileView),
    annotations: {
      title: 'My profile',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  update_my_profile: {
    title: 'Edit my profile',
    description:
      "Change your org's profile (only the fields sent; null clears; contact_* stay private). A `slug` lists you in " +
      'the directory.',
    inputSchema: z
      .object({
        display_name: patch.display_name,
        slug: patch.slug,
        bio: patch.bio,
        website: patch.website,
        contact_email: patch.contact_email,
        contact_phone: patch.contact_phone,
      })
      .strict(),
    outputSchema: dataOrError(OwnProfileView),
    annotations: {
      title: 'Edit my profile',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
};

export function registerProfileTools(server: McpServer, services: Services, ctx: ToolContext): void {
  server.registerTool('list_providers', DEFS.list_providers, ({ query, limit, offset }) =>
    runTool(ctx.log, async () => ({
      ...(await services.providerDirectory.list(parseArgs(ProvidersQuery, { q: query, limit, offset }))),
    })),
  );

  server.registerTool('get_provider_profile', DEFS.get_provider_profile, ({ slug }) =>
    runTool(ctx.log, async () => ({ ...(await services.providerDirectory.get(slug)) })),
  );

  server.registerTool('get_my_profile', DEFS.get_my_profile, () =>
    runTool(ctx.log, async () => {
      requireScope(ctx.principal, 'provider:write');
      return { ...(await services.profiles.getOwn(ctx.principal)) };
    }),
  );

  server.registerTool('update_my_profile', DEFS.update_my_profile, (args) =>
    runTool(ctx.log, async () => {
      requireScope(ctx.principal, 'provider:write');
      return { ...(await services.profiles.update(ctx.principal, parseArgs(ProfilePatch, args))) };
    }),
  );
}
