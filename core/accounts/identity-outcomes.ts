/**
 * The small pieces the identity flows (signup, email verification, sign-in codes, the OAuth page's proof) share: what
 * a verification did (for the after-commit work), the key elevation, a new owned org, and the errors and views they
 * answer with.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { VERIFIED_EXTRA_SCOPES } from '../auth/scopes.js';
import { ConflictError, UnauthenticatedError } from '../errors.js';
import { Org, User } from '../../db/entities/index.js';
import { newId } from '../ids.js';
import { STARTER_CREDIT_CENTS } from '../temporal/contracts.js';
import type { RevokedCredentials } from './unproven-org.js';
import type { SessionView, UserView } from './accounts.schemas.js';
export type { SessionView, UserView } from './accounts.schemas.js';

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

/**
 * A verification that made a new org for the proven address: no keys elevated; the keys of a stale signup of the
 * address (`stale`, abandoned in the same transaction) are dropped from the gateways' caches after commit.
 */
export function newOrgOutcome(
  userId: string,
  orgId: string,
  stale: RevokedCredentials | undefined,
  newlyVerified: boolean,
): VerifyOutcome {
  return {
    userId,
    orgId,
    newlyVerified,
    scopesAdded: [],
    keyHashes: stale?.keys.map((k) => k.hash) ?? [],
    keysOrgId: stale?.orgId,
  };
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

export function sessionView(
  session: { token: string; sessionId: string; expiresAt: Date },
  orgId: string,
  user: Parameters<typeof userView>[0],
): SessionView {
  return {
    session_token: session.token,
    session_id: session.sessionId,
    expires_at: session.expiresAt.toISOString(),
    org_id: orgId,
    user: userView(user),
  };
}

/**
 * A new standard org and its owner: a human signup (trial credit withheld until verified), a sign-up by code (trial
 * credit, owner verified) or an OAuth page's first proof (verified, no trial credit: no bot check there).
 */
export function newOwnedOrg(
  tem: EntityManager,
  email: string,
  options: { name?: string; starterCredit?: boolean; verifiedAt?: Date },
) {
  const org = tem.create(Org, {
    id: newId('org'),
    kind: 'standard',
    name: options.name ?? null,
    ...(options.starterCredit ? { withheldCreditCents: STARTER_CREDIT_CENTS } : {}),
  });
  const user = tem.create(User, {
    id: newId('user'),
    org,
    email,
    name: options.name ?? null,
    role: 'owner',
    ...(options.verifiedAt ? { emailVerifiedAt: options.verifiedAt } : {}),
  });
  return { org, user };
}
