/**
 * A one-time sign-in code mailed to an address. Stored as a keyed hash; single use; void after too many wrong tries.
 * Rows exist for unknown addresses too (nothing is mailed then), so known and unknown addresses cost the same.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { emailAddress, prefixedId, sha256Hex, singleUse } from './common.js';

export const LoginCode = defineEntity({
  name: 'LoginCode',
  tableName: 'login_codes',
  properties: {
    id: prefixedId(),
    email: emailAddress(),
    codeHash: sha256Hex(),
    attempts: p.integer().default(0),
    ...singleUse(),
  },
  indexes: [{ name: 'login_codes_email_created_idx', properties: ['email', 'createdAt'] }],
  checks: [{ name: 'login_codes_attempts_nonnegative', expression: 'attempts >= 0' }],
});

export type ILoginCode = InferEntity<typeof LoginCode>;
