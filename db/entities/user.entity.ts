/** A person who signs in (email, passwordless). Anonymous registration creates an org and a key but no user. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { orgOwnedRow } from './org-owned.js';
import { emailAddress, timestamps } from './common.js';

export const USER_ROLES = ['owner', 'admin', 'member'] as const;
export type UserRole = (typeof USER_ROLES)[number];

export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    ...orgOwnedRow(),
    /** Stored lower-cased; unique across the platform. */
    email: emailAddress().unique(),
    name: p.text().nullable(),
    role: p.enum([...USER_ROLES]).default('owner'),
    emailVerifiedAt: p.datetime().nullable(),
    ...timestamps(),
  },
  checks: [{ name: 'users_email_lowercase', expression: 'email = lower(email)' }],
});

export type IUser = InferEntity<typeof User>;
