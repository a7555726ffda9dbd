/** An email-verification token (single use, expiring), stored only as its SHA-256. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { User } from './user.entity.js';

export const EmailVerification = defineEntity({
  name: 'EmailVerification',
  tableName: 'email_verifications',
  properties: {
    id: p.string().length(40).primary(),
    tokenHash: p.string().length(64).unique(),
    user: p.manyToOne(User).index(),
    createdAt: p.datetime().defaultRaw('now()'),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
  },
});

export type IEmailVerification = InferEntity<typeof EmailVerification>;
