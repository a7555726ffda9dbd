/**
 * An email-verification token (single use, expiring), stored only as its SHA-256. Two kinds:
 * - signup: `user` is the person who signed up; verifying marks them verified.
 * - attach (agent-first elevation): an anonymous org's root `key` asked to attach `email`; there is no user yet,
 *   verifying creates the org's owner with that email and elevates the key in place.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { emailAddress, hashedTokenRow, issuedExpiring } from './common.js';
import { ApiKey } from './api-key.entity.js';
import { Org } from './org.entity.js';
import { User } from './user.entity.js';

export const EmailVerification = defineEntity({
  name: 'EmailVerification',
  tableName: 'email_verifications',
  properties: {
    ...hashedTokenRow(),
    user: p.manyToOne(User).nullable().index(),
    /** Attach requests: the address to attach (lower-cased), the org and the key that asked. */
    email: emailAddress().nullable(),
    org: p.manyToOne(Org).nullable().index(),
    key: p.manyToOne(ApiKey).nullable().index(),
    ...issuedExpiring(),
    usedAt: p.datetime().nullable(),
  },
  checks: [
    {
      name: 'email_verifications_target',
      expression: '(user_id IS NOT NULL) OR (email IS NOT NULL AND org_id IS NOT NULL AND key_id IS NOT NULL)',
    },
  ],
});

export type IEmailVerification = InferEntity<typeof EmailVerification>;
