/**
 * What clicking a verification link does, in plain words, for the mail and for the page the link opens (issue 21,
 * item 1). The link elevates a key someone else may hold (whoever signed up with the address, or the agent that asked
 * to attach it), so the person must see which org, made when and how, and which key gains what, before confirming.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKey, EmailVerification, Org, User } from '../../db/entities/index.js';
import { VERIFIED_EXTRA_SCOPES, type Scope } from '../auth/scopes.js';
import { sha256Hex } from '../crypto.js';
import { ValidationError } from '../errors.js';

export interface VerificationFacts {
  /** signup: a signup with this address; attach: an agent's anonymous org asked to attach it. */
  kind: 'signup' | 'attach';
  email: string;
  orgId: string;
  orgName: string | null;
  orgCreatedAt: Date;
  /** The keys that gain `gains` when the link is used. */
  keys: { id: string; name: string }[];
  gains: readonly Scope[];
}

const utc = (d: Date) => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** The facts as plain lines (the mail's text, the page's list). `loginUrl`: where to sign in with a code instead. */
export function verificationFactLines(f: VerificationFacts, loginUrl: string): { facts: string[]; warning: string } {
  const org = f.orgName ? `${f.orgId} ("${f.orgName}")` : f.orgId;
  const made =
    f.kind === 'signup'
      ? `by a signup with this address (POST /v1/signup, from the API or a browser) on ${utc(f.orgCreatedAt)}`
      : `by an agent's anonymous registration (POST /v1/register) on ${utc(f.orgCreatedAt)}; ` +
        'one of its keys asked to attach this address';
  const keys = f.keys.length ? f.keys.map((k) => `${k.id} ("${k.name}")`).join(', ') : 'none (no active key)';
  const gains = f.gains.join(' and ');
  const effect =
    f.kind === 'signup'
      ? `Clicking confirms this address for that organization: key ${keys} gains ${gains} ` +
        '(cards, checkout, auto-reload, provider listings), its sessions gain every scope, and its $1.00 starter ' +
        'credit becomes usable. Whoever holds that key or a session of it gets all of that.'
      : `Clicking makes this address the owner of that organization, and key ${keys} gains ${gains} ` +
        '(cards, checkout, auto-reload, provider listings). Whoever holds that key keeps it.';
  const warning =
    f.kind === 'signup'
      ? 'If you did not create this organization yourself, do not click: whoever did holds that key. ' +
        `Sign in with a code instead (${loginUrl}): that revokes every key and session made before you proved the address.`
      : 'If you did not ask an agent to attach this address, do not click; ignore this message and nothing changes.';
  return {
    facts: [`Organization: ${org}`, `Made: ${made}`, `Key that gains ${gains}: ${keys}`, effect],
    warning,
  };
}

/**
 * The facts of a live verification token (read only: the page's GET changes nothing). A token that is unknown, used
 * or expired is the same 400 the verification itself gives.
 */
export async function loadVerificationFacts(em: EntityManager, token: string, now: Date): Promise<VerificationFacts> {
  const row = await em.findOne(EmailVerification, { tokenHash: sha256Hex(token) });
  if (!row) throw new ValidationError('This verification token is not valid.');
  if (row.usedAt) throw new ValidationError('This verification token has already been used.');
  if (row.expiresAt <= now) {
    throw new ValidationError('This verification token has expired; sign in with a code to verify instead.');
  }
  if (row.user) {
    const user = await em.findOneOrFail(User, row.user.id, { fields: ['email', 'org', 'emailVerifiedAt'] });
    if (user.emailVerifiedAt) throw new ValidationError('This email is already verified; sign in with a code.');
    const org = await em.findOneOrFail(Org, user.org.id, { fields: ['name', 'createdAt'] });
    const keys = await em.find(
      ApiKey,
      { org: org.id, source: 'signup', revokedAt: null },
      { fields: ['id', 'name'], orderBy: { createdAt: 'asc' } },
    );
    return facts('signup', user.email, org, keys);
  }
  const org = await em.findOneOrFail(Org, row.org!.id, { fields: ['name', 'createdAt'] });
  const key = await em.findOne(ApiKey, { id: row.key!.id, revokedAt: null }, { fields: ['id', 'name'] });
  return facts('attach', row.email!, org, key ? [key] : []);
}

function facts(
  kind: VerificationFacts['kind'],
  email: string,
  org: { id: string; name?: string | null; createdAt: Date },
  keys: { id: string; name: string }[],
): VerificationFacts {
  return {
    kind,
    email,
    orgId: org.id,
    orgName: org.name ?? null,
    orgCreatedAt: org.createdAt,
    keys: keys.map((k) => ({ id: k.id, name: k.name })),
    gains: VERIFIED_EXTRA_SCOPES,
  };
}
