/**
 * What happens to an org whose owner's email was never proven (issue 21, item 1: pre-registration takeover).
 *
 * Anyone can sign up with someone else's address and get a key and a session before the address is proven. So:
 * - The first proof by code (a sign-in code, or the code of an OAuth approval) revokes every credential the org had
 *   before the proof: every key (and its OAuth grants and tokens, its agent-tool sessions) and every session, and
 *   turns auto-reload off. The prover's own session or OAuth key is created afterwards and is unaffected.
 * - An unverified signup expires 24 hours after it was made: the next signup, attach, sign-in or OAuth proof for its
 *   address abandons the stale org (same revocation) and frees the address (the user row's email is rewritten to a
 *   reserved `.invalid` address; the org, its ledger and its history stay).
 * docs/decisions.md, "Pre-registration takeover (issue 21)".
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { lockOrg, pgArray } from '../db/sql.js';

/** An unverified signup frees its email this long after it was made (the verification link's lifetime too). */
export const UNVERIFIED_SIGNUP_TTL_MS = 24 * 3_600_000;

/** What a revocation ended, for the owner's mail and the caches. */
export interface RevokedCredentials {
  orgId: string;
  keys: { id: string; name: string; hash: string }[];
  sessions: number;
  mcpSessions: number;
  oauthGrants: number;
  autoReloadTurnedOff: boolean;
}

export function revokedAnything(r: RevokedCredentials): boolean {
  return r.keys.length + r.sessions + r.mcpSessions + r.oauthGrants > 0 || r.autoReloadTurnedOff;
}

/**
 * Revoke every live credential of an org inside the caller's transaction: keys, their OAuth grants and tokens and
 * agent-tool sessions, people's sessions; auto-reload off. The org row lock orders it against key creation.
 * The caller drops the returned key hashes from every cache after commit.
 */
export async function revokeOrgCredentials(tem: EntityManager, orgId: string, now: Date): Promise<RevokedCredentials> {
  await lockOrg(tem, orgId);
  const keys = await tem.execute<{ id: string; name: string; key_hash: string }[]>(
    `update api_keys set revoked_at = ?, updated_at = ? where org_id = ? and revoked_at is null
      returning id, name, key_hash`,
    [now, now, orgId],
  );
  const keyIds = pgArray(keys.map((k) => k.id));
  const sessions = await tem.execute<{ id: string }[]>(
    'update sessions set revoked_at = ? where org_id = ? and revoked_at is null returning id',
    [now, orgId],
  );
  const mcpSessions = await tem.execute<{ id_hash: string }[]>(
    `update mcp_sessions set ended_at = ?, end_reason = 'key_revoked'
      where key_id = any(?::varchar[]) and ended_at is null returning id_hash`,
    [now, keyIds],
  );
  // An OAuth grant's account is the key it acts as: its grant, codes and tokens all name the key.
  const oauth = await tem.execute<{ model: string }[]>(
    `delete from oauth_payloads where payload->>'accountId' = any(?::text[]) returning model`,
    [keyIds],
  );
  const reload = await tem.execute<{ id: string }[]>(
    'update orgs set auto_reload_enabled = false, updated_at = ? where id = ? and auto_reload_enabled returning id',
    [now, orgId],
  );
  return {
    orgId,
    keys: keys.map((k) => ({ id: k.id, name: k.name, hash: k.key_hash })),
    sessions: sessions.length,
    mcpSessions: mcpSessions.length,
    oauthGrants: oauth.filter((r) => r.model === 'Grant').length,
    autoReloadTurnedOff: reload.length > 0,
  };
}

/** The reserved address an abandoned signup's user row keeps (RFC 2606 `.invalid`: never deliverable). */
export function abandonedEmail(userId: string): string {
  return `${userId.toLowerCase()}@abandoned-signup.invalid`;
}

/**
 * If `email` is held by an unverified user whose signup is older than UNVERIFIED_SIGNUP_TTL_MS, abandon that org
 * (revoke everything, void its verification links) and free the address. Returns what was revoked, or undefined
 * when the address is not held by a stale signup.
 */
export async function releaseStaleSignup(
  tem: EntityManager,
  email: string,
  now: Date,
): Promise<RevokedCredentials | undefined> {
  const cutoff = new Date(now.getTime() - UNVERIFIED_SIGNUP_TTL_MS);
  const [stale] = await tem.execute<{ id: string; org_id: string }[]>(
    `select id, org_id from users where email = ? and email_verified_at is null and created_at <= ? for update`,
    [email, cutoff],
  );
  if (!stale) return undefined;
  const revoked = await revokeOrgCredentials(tem, stale.org_id, now);
  await tem.execute('update users set email = ?, updated_at = ? where id = ?', [
    abandonedEmail(stale.id),
    now,
    stale.id,
  ]);
  await tem.execute('update email_verifications set used_at = ? where user_id = ? and used_at is null', [
    now,
    stale.id,
  ]);
  return revoked;
}
