/**
 * An org's profile: public fields (display name, slug, bio, website, avatar) shown in the provider directory, and
 * private contact fields shown only to the org itself.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Avatar } from './avatar.entity.js';
import { emailAddress, timestamps } from './common.js';
import { Org } from './org.entity.js';

export const Profile = defineEntity({
  name: 'Profile',
  tableName: 'profiles',
  properties: {
    org: p.oneToOne(Org).primary().owner(),
    displayName: p.string().length(80).nullable(),
    /** Lower-case, URL-safe, unique across orgs. */
    slug: p.string().length(40).nullable().unique(),
    bio: p.text().nullable(),
    website: p.string().length(200).nullable(),
    avatar: p.manyToOne(Avatar).nullable(),
    contactEmail: emailAddress().nullable(),
    contactPhone: p.string().length(32).nullable(),
    ...timestamps(),
  },
  checks: [
    { name: 'profiles_slug_format', expression: "slug IS NULL OR slug ~ '^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$'" },
  ],
});

export type IProfile = InferEntity<typeof Profile>;
