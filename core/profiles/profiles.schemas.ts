/**
 * Response `data` of the profile routes and tools (profiles.service.ts) and of the public provider directory
 * (core/providers/provider-directory.service.ts, which lists public profiles); the OpenAPI document shares them.
 */
import { z } from 'zod';

/** A profile's public fields. */
export const PublicProfileView = z.object({
  org_id: z.string(),
  display_name: z.string().nullable(),
  slug: z.string().nullable().describe('Listed in the provider directory once set.'),
  bio: z.string().nullable(),
  website: z.string().nullable(),
  avatar_url: z.string().nullable(),
});
export type PublicProfileView = z.infer<typeof PublicProfileView>;

/** GET and PATCH /v1/me/profile: the caller's own profile, with the private contact fields. */
export const OwnProfileView = PublicProfileView.extend({
  contact_email: z.string().nullable().describe('Private.'),
  contact_phone: z.string().nullable().describe('Private.'),
  updated_at: z.string().nullable().describe('Null while the org has no profile yet.'),
});
export type OwnProfileView = z.infer<typeof OwnProfileView>;

/** POST /v1/me/avatar: the new avatar's URL and the profile. */
export const AvatarView = z.object({ avatar_url: z.string(), profile: OwnProfileView });
export type AvatarView = z.infer<typeof AvatarView>;

/**
 * Trust badges: `verified_email` (the owner proved the address), `connect_enabled` (Stripe payouts are set up),
 * `verified_upstream` (a live API passed its latest upstream smoke test).
 */
export const BADGES = ['verified_email', 'connect_enabled', 'verified_upstream'] as const;

/** One provider of GET /v1/providers: its public profile, badges and number of live APIs. */
export const ProviderListItem = PublicProfileView.extend({
  slug: z.string(),
  badges: z.array(z.enum(BADGES)),
  live_api_count: z.number().int(),
});
export type ProviderListItem = z.infer<typeof ProviderListItem>;

/** GET /v1/providers/{slug}: the list item, 30-day stats and the live APIs, newest first. */
export const ProviderDetail = ProviderListItem.extend({
  stats: z.object({
    live_apis: z.number().int(),
    calls_30d: z.number().int(),
    success_rate_30d: z.number().nullable().describe('4 decimals; null without calls.'),
  }),
  apis: z.array(
    z.object({
      slug: z.string(),
      name: z.string(),
      summary: z.string(),
      category: z.string().nullable(),
      published_at: z.string().nullable(),
    }),
  ),
});
export type ProviderDetail = z.infer<typeof ProviderDetail>;
