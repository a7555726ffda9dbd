/**
 * The small pieces the identity service shares between its flows: what a verification did (for the after-commit
 * work), the key elevation, and the errors and views it answers with.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { VERIFIED_EXTRA_SCOPES } from '../auth/scopes.js';
import { ConflictError, UnauthenticatedError } from '../errors.js';
import type { UserView } from './identity.service.js';
import type { RevokedCredentials } from './unproven-org.js';

export function userView(user: {
  id: string;
  email: string;
  name?: string | null;
  role: string;
  emailVerifiedAt?: Date | null;
}): UserView {
  return {
    user_id: user.id,
    email: user.email,
    name: user.name ?? null,
    role: user.role,
    email_verified: user.emailVerifiedAt != null,
  };
}

export interface VerifyOutcome {
  userId: string;
  orgId: string;
  newlyVerified: boolean;
  scopesAdded: string[];
  keyHashes: string[];
  /** The org `keyHashes` belong to when not `orgId` (a stale signup abandoned while another org is made). */
  keysOrgId?: string;
  /** The signup credit hold was signalled (human signup only). */
  creditsReleased?: boolean;
  /** A proof by code revoked what the org had before it: mailed to the owner after commit. */
  revokedNotice?: { email: string; revoked: RevokedCredentials };
}

/** Add billing:write and provider:write to the active keys matching `where`; returns their hashes. */
export async function elevateKeys(tem: EntityManager, now: Date, where: string, param: string): Promise<string[]> {
  const rows = await tem.execute<{ key_hash: string }[]>(
    `update api_keys
        set scopes = array(select distinct s from unnest(scopes || ?::text[]) as s order by s), updated_at = ?
      where ${where} and revoked_at is null
      returning key_hash`,
    [`{${VERIFIED_EXTRA_SCOPES.join(',')}}`, now, param],
  );
  return rows.map((r) => r.key_hash);
}

export function invalidCode(): UnauthenticatedError {
  return new UnauthenticatedError('The code is not valid. Request a new one if it has expired.');
}

/** A code matched an address whose stale signup was just abandoned: nothing verified, only the caches to clear. */
export function abandonedOutcome(stale: RevokedCredentials): VerifyOutcome {
  const keyHashes = stale.keys.map((k) => k.hash);
  return { userId: '', orgId: stale.orgId, newlyVerified: false, scopesAdded: [], keyHashes };
}

export function emailTaken(): ConflictError {
  return new ConflictError('An account with this email already exists. Sign in with a code instead.', {
    details: { sign_in: '/v1/auth/login/request' },
  });
}

export function hasOwner(): ConflictError {
  return new ConflictError('This organization already has an owner; people sign in with a code instead.', {
    details: { sign_in: '/v1/auth/login/request' },
  });
}
