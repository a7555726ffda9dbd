/**
 * A one-time sign-in code mailed to an address. Stored as a keyed hash; single use; void after too many wrong tries.
 * Rows exist for unknown addresses too (nothing is mailed then), so known and unknown addresses cost the same.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const LoginCode = defineEntity({
  name: 'LoginCode',
  tableName: 'login_codes',
  properties: {
    id: p.string().length(40).primary(),
    email: p.string().length(320),
    codeHash: p.string().length(64),
    attempts: p.integer().default(0),
    createdAt: p.datetime().defaultRaw('now()'),
    expiresAt: p.datetime(),
    consumedAt: p.datetime().nullable(),
  },
  indexes: [{ name: 'login_codes_email_created_idx', properties: ['email', 'createdAt'] }],
  checks: [{ name: 'login_codes_attempts_nonnegative', expression: 'attempts >= 0' }],
});

export type ILoginCode = InferEntity<typeof LoginCode>;
