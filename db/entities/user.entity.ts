/** A person who signs in (email, passwordless). Anonymous registration creates an org and a key but no user. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { timestamps } from './common.js';
import { Org } from './org.entity.js';

export const USER_ROLES = ['owner', 'admin', 'member'] as const;
export type UserRole = (typeof USER_ROLES)[number];

export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.string().length(40).primary(),
    org: p.manyToOne(Org).index(),
    /** Stored lower-cased; unique across the platform. */
    email: p.string().length(320).unique(),
    name: p.text().nullable(),
    role: p.enum([...USER_ROLES]).default('owner'),
    emailVerifiedAt: p.datetime().nullable(),
    ...timestamps(),
  },
  checks: [{ name: 'users_email_lowercase', expression: 'email = lower(email)' }],
});

export type IUser = InferEntity<typeof User>;
