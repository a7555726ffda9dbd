/**
 * Profile tools: the public provider directory (GET /v1/providers, /v1/providers/{slug}) and the caller's own profile
 * (GET and PATCH /v1/me/profile), through the same core functions. The own-profile tools need `provider:write`.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { requireScope } from '../../core/auth/scopes.js';
import { ProfilePatch } from '../../core/profiles/profiles.service.js';
import { ProvidersQuery } from '../../core/providers/directory.service.js';
import type { Services } from '../../core/services.js';
import type { ToolContext } from '../tool-context.js';
import { runTool } from './tool-result.js';
import { dataOrError, PageInfoShape, parseArgs } from './tool-schemas.js';

const NullableString = z.string().nullable();

const PublicProfileOut = {
  org_id: z.string(),
  display_name: NullableString,
  slug: NullableString,
  bio: NullableString,
  website: NullableString,
  avatar_url: NullableString,
};

const ProviderItemOut = { ...PublicProfileOut, badges: z.array(z.string()), live_api_count: z.number().int() };

const OwnProfileOut = {
  ...PublicProfileOut,
  contact_email: NullableString,
  contact_phone: NullableString,
  updated_at: NullableString,
};

const patch = ProfilePatch.shape;

/** The tools' definitions, built once per process (each session registers them with its own handlers). */
const DEFS = {
  list_providers: {
    title: 'List providers',
    description:
      'Browse the public provider directory: organizations with a public profile, their trust badges ' +
      '(verified_email, connect_enabled, verified_upstream) and number of live APIs, most live APIs first. ' +
      '`query` filters by slug, name or bio. Use get_provider_profile for one provider’s stats and APIs. Read-only, ' +
      'free, no scope needed.',
    inputSchema: z
      .object({
        query: ProvidersQuery.shape.q.describe('Text to look for in the provider’s slug, name or bio.'),
        limit: ProvidersQuery.shape.limit.describe('At most this many (1-200, default 50).'),
        offset: ProvidersQuery.shape.offset.describe('Skip this many (default 0).'),
      })
      .strict(),
    outputSchema: dataOrError({ items: z.array(z.looseObject(ProviderItemOut)), pagination: PageInfoShape }),
    annotations: {
      title: 'List providers',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  get_provider_profile: {
    title: 'Get a provider’s profile',
    description:
      'One provider’s public profile by its slug: display name, bio, website, avatar, trust badges, 30-day call ' +
      'stats and its live APIs (each with the slug to pass to get_api_details). Read-only, free, no scope needed.',
    inputSchema: z
      .object({
        slug: z.string().trim().min(1).max(100).describe('The provider’s profile slug, from list_providers.'),
      })
      .strict(),
    outputSchema: dataOrError({
      ...ProviderItemOut,
      stats: z.looseObject({
        live_apis: z.number().int(),
        calls_30d: z.number().int(),
        success_rate_30d: z.number().nullable(),
      }),
      apis: z.array(z.looseObject({ slug: z.string(), name: z.string(), summary: z.string() })),
    }),
    annotations: {
      title: 'Get a provider’s profile',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  get_my_profile: {
    title: 'Get my profile',
    description:
      'Your organization’s own profile, including the private contact fields (contact_email, contact_phone) that ' +
      'the public directory never shows. A profile appears in the directory once it has a slug. Read-only. Needs ' +
      '`provider:write`.',
    inputSchema: z.object({}).strict(),
    outputSchema: dataOrError(OwnProfileOut),
    annotations: {
      title: 'Get my profile',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  update_my_profile: {
    title: 'Update my profile',
    description:
      'Change your organization’s profile. Send only the fields to change (null clears one); each replaces the ' +
      'previous value. Setting a `slug` lists you in the public provider directory under it (409 `conflict` if ' +
      'taken). display_name, slug, bio and website are public; contact_email and contact_phone stay private. ' +
      'Needs `provider:write`.',
    inputSchema: z
      .object({
        display_name: patch.display_name.describe('Public name, 1-80 characters, or null.'),
        slug: patch.slug.describe('Public profile slug: 1-40 lower-case letters, digits or inner hyphens, or null.'),
        bio: patch.bio.describe('Public description, up to 1000 characters, or null.'),
        website: patch.website.describe('Public http(s) URL, or null.'),
        contact_email: patch.contact_email.describe('Private contact email address, or null.'),
        contact_phone: patch.contact_phone.describe('Private contact phone number, or null.'),
      })
      .strict(),
    outputSchema: dataOrError(OwnProfileOut),
    annotations: {
      title: 'Update my profile',
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
      ...(await services.directory.list(parseArgs(ProvidersQuery, { q: query, limit, offset }))),
    })),
  );

  server.registerTool('get_provider_profile', DEFS.get_provider_profile, ({ slug }) =>
    runTool(ctx.log, async () => ({ ...(await services.directory.get(slug)) })),
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
