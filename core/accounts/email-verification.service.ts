/**
 * Email verification: the mailed link (human signup), what the link's page shows before it is used, and the
 * agent-first elevation (an anonymous org's root key attaches an email; the link makes its owner).
 *
 * - Verifying the email (by token, or by the first successful sign-in code, which proves the same thing) adds
 *   billing:write and provider:write to the signup key in place and releases the held credit, exactly once.
 * - Agent-first elevation: an anonymous org's root key attaches an email (POST /v1/me/email); the mailed link
 *   (same mail and token machinery as signup) creates the org's owner with that email and elevates that key in place.
 */
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { ApiKey, EmailVerification, Org, User, type IEmailVerification } from '../../db/entities/index.js';
import { VERIFIED_EXTRA_SCOPES, type Principal } from '../auth/scopes.js';
import { randomString, sha256Hex } from '../crypto.js';
import { ForbiddenError, UnauthenticatedError, ValidationError } from '../errors.js';
import { newId } from '../ids.js';
import { lockOrg } from '../db/sql.js';
import { revokedBeforeProofEmail } from './revocation-email.js';
import { verificationEmail } from './emails.js';
import { SIGNUP_CREDIT_HOLD, STARTER_CREDIT_CENTS } from '../temporal/contracts.js';
import { elevateKeys, emailTaken, hasOwner, userView, type VerifyOutcome } from './identity-outcomes.js';
import {
  hitLimit,
  limitSignups,
  RATE_LIMITS,
  VERIFICATION_TOKEN_TTL_MS,
  type ClientInfo,
  type IdentityDeps,
} from './identity-rules.js';
import { releaseStaleSignup, revokedAnything, revokeOrgCredentials } from './unproven-org.js';
import { loadVerificationFacts, type VerificationFacts } from './verification-facts.js';
import type { AttachEmailBody, VerifyEmailBody } from './accounts.schemas.js';
import type { AttachEmailView, VerifiedView } from './accounts.schemas.js';
export type { AttachEmailView, VerifiedView } from './accounts.schemas.js';

/** How long a verify request waits for the released credit to land, so its answer shows the new balance. */
const RELEASE_WAIT_MS = 5_000;

export class EmailVerificationService {
  constructor(private readonly deps: IdentityDeps) {}

  async verifyEmail(input: VerifyEmailBody): Promise<VerifiedView> {
    const { orm, clock } = this.deps;
    const outcome = await orm.em
      .fork()
      .transactional(async (tem) => {
        const row = await tem.findOne(
          EmailVerification,
          { tokenHash: sha256Hex(input.token) },
          { lockMode: LockMode.PESSIMISTIC_WRITE },
        );
        if (!row) throw new ValidationError('This verification token is not valid.');
        if (row.usedAt) throw new ValidationError('This verification token has already been used.');
        if (row.expiresAt <= clock.now()) {
          throw new ValidationError('This verification token has expired; sign in with a code to verify instead.');
        }
        row.usedAt = clock.now();
        await tem.flush();
        if (!row.user) return this.attachVerified(tem, row);
        const user = await tem.findOneOrFail(User, row.user.id, { fields: ['id', 'org'] });
        return this.markVerified(tem, user.id, user.org.id, 'link');
      })
      .catch((err: unknown) => {
        // An attach link used while another org takes the same address: the unique index decides.
        throw err instanceof UniqueConstraintViolationException ? emailTaken() : err;
      });
    await this.afterVerified(outcome);
    return this.verifiedView(outcome.userId, outcome.orgId, outcome.scopesAdded);
  }

  /**
   * Mark a user's email verified (once) and release the held credit. By the link: the org's signup key(s) gain
   * billing:write and provider:write in place (spec; the mail and page said so). By a code: the proof must not hand
   * power to credentials someone else may have made before it, so every key, session, MCP session and OAuth grant
   * of the org is revoked instead (unproven-org.ts) and the owner is mailed the list.
   * The release is signalled inside the caller's transaction: if Temporal cannot be reached the whole verification
   * rolls back and can be retried with the same token; the signal itself is idempotent.
   */
  async markVerified(
    tem: EntityManager,
    userId: string,
    orgId: string,
    proof: 'link' | 'code',
  ): Promise<VerifyOutcome> {
    const now = this.deps.clock.now();
    const updated = await tem.execute<{ email: string }[]>(
      `update users set email_verified_at = ?, updated_at = ? where id = ? and email_verified_at is null
        returning email`,
      [now, now, userId],
    );
    if (updated.length === 0) return { userId, orgId, newlyVerified: false, scopesAdded: [], keyHashes: [] };

    const revoked = proof === 'code' ? await revokeOrgCredentials(tem, orgId, now) : undefined;
    const keys = revoked
      ? revoked.keys.map((k) => k.hash)
      : await elevateKeys(tem, now, `org_id = ? and source = 'signup'`, orgId);
    await this.deps.temporal.releaseSignupCredits({
      orgId,
      amountCents: STARTER_CREDIT_CENTS,
      holdFor: SIGNUP_CREDIT_HOLD,
    });
    return {
      userId,
      orgId,
      newlyVerified: true,
      scopesAdded: revoked ? [] : [...VERIFIED_EXTRA_SCOPES],
      keyHashes: keys,
      creditsReleased: true,
      revokedNotice: revoked && revokedAnything(revoked) ? { email: updated[0]!.email, revoked } : undefined,
    };
  }

  async afterVerified(outcome: VerifyOutcome): Promise<void> {
    // Elevated, revoked or abandoned keys: every process drops them from its cache, and their org's key version moves
    // in the gateways' shared state (a lost pub/sub message must not keep them working).
    if (outcome.keyHashes.length) {
      await this.deps.keys.invalidateMany(outcome.keyHashes, outcome.keysOrgId ?? outcome.orgId);
    }
    const notice = outcome.revokedNotice;
    if (notice) this.deps.mailer.sendInBackground(revokedBeforeProofEmail(notice.email, notice.revoked));
    if (!outcome.newlyVerified || !outcome.creditsReleased) return;
    try {
      await this.deps.temporal.waitForSignupCredits(outcome.orgId, RELEASE_WAIT_MS);
    } catch (err) {
      this.deps.logger.warn({ err, org_id: outcome.orgId }, 'waiting for the credit release failed');
    }
  }

  private async verifiedView(userId: string, orgId: string, scopesAdded: string[]): Promise<VerifiedView> {
    const em = this.deps.orm.em.fork();
    const user = await em.findOneOrFail(User, userId);
    const org = await em.findOneOrFail(Org, orgId);
    return {
      verified: true,
      org_id: orgId,
      user: userView(user),
      scopes_added: scopesAdded,
      credit_cents: org.creditCents,
      withheld_credit_cents: org.withheldCreditCents,
    };
  }

  /** What using a verification token would do (the page the link opens shows it; nothing changes). */
  async describeVerification(token: string): Promise<VerificationFacts> {
    return loadVerificationFacts(this.deps.orm.em.fork(), token, this.deps.clock.now());
  }

  // ---- agent-first elevation ----------------------------------------------------------------------------------

  /**
   * POST /v1/me/email: an anonymous org's root key asks to attach an email. Mails a verification link (the signup
   * mail and token); nothing changes until the link is used. A newer request replaces a pending one (a typo must not
   * leave a live link in a stranger's mailbox). Limits: the signup budget per client address, 5 per org per hour.
   */
  async attachEmail(principal: Principal, input: AttachEmailBody, client: ClientInfo): Promise<AttachEmailView> {
    const { config, orm, clock } = this.deps;
    await limitSignups(this.deps, client);
    await hitLimit(
      this.deps.counters,
      `attach-email:org:${principal.orgId}`,
      RATE_LIMITS.attachEmailPerOrg,
      'Too many email requests for this organization; try later.',
    );
    const token = randomString(43);
    const { facts, stale } = await orm.em.fork().transactional(async (tem) => {
      await lockOrg(tem, principal.orgId);
      if (principal.type === 'session' || (await tem.count(User, { org: principal.orgId })) > 0) throw hasOwner();
      const key = await tem.findOne(
        ApiKey,
        { id: principal.keyId, revokedAt: null },
        { fields: ['id', 'name', 'parentKey'] },
      );
      if (!key) throw new UnauthenticatedError('Unknown or revoked API key.');
      if (key.parentKey) {
        throw new ForbiddenError(
          `Only the organization's root key may attach an email; this key was minted by ${key.parentKey.id}.`,
          { details: { root_key_required: true } },
        );
      }
      const now = clock.now();
      const stale = await releaseStaleSignup(tem, input.email, now);
      if (await tem.findOne(User, { email: input.email }, { fields: ['id'] })) throw emailTaken();
      await tem.nativeDelete(EmailVerification, { org: principal.orgId, user: null, usedAt: null });
      tem.create(EmailVerification, {
        id: newId('emailVerification'),
        tokenHash: sha256Hex(token),
        user: null,
        email: input.email,
        org: principal.orgId,
        key: key.id,
        createdAt: now,
        expiresAt: new Date(now.getTime() + VERIFICATION_TOKEN_TTL_MS),
      });
      await tem.flush();
      const org = await tem.findOneOrFail(Org, principal.orgId, { fields: ['name', 'createdAt'] });
      const facts: VerificationFacts = {
        kind: 'attach',
        email: input.email,
        orgId: org.id,
        orgName: org.name ?? null,
        orgCreatedAt: org.createdAt,
        keys: [{ id: key.id, name: key.name }],
        gains: VERIFIED_EXTRA_SCOPES,
      };
      return { facts, stale };
    });
    await this.deps.keys.invalidateMany(stale?.keys.map((k) => k.hash) ?? [], stale?.orgId);
    this.deps.mailer.sendInBackground(verificationEmail(input.email, config.urls.publicBase, token, facts));
    return { sent: true, email: input.email, expires_in_seconds: VERIFICATION_TOKEN_TTL_MS / 1000 };
  }

  /**
   * An attach link used: the person becomes the org's owner (verified), the key that asked gains billing:write and
   * provider:write in place, and the org is no longer ephemeral. No trial credit: that belongs to the bot-checked
   * human signup. The org row lock orders this against a second attach link of the same org.
   */
  private async attachVerified(tem: EntityManager, row: IEmailVerification): Promise<VerifyOutcome> {
    const now = this.deps.clock.now();
    await lockOrg(tem, row.org!.id);
    const org = await tem.findOneOrFail(Org, row.org!.id);
    if ((await tem.count(User, { org: org.id })) > 0) throw hasOwner();
    const stale = await releaseStaleSignup(tem, row.email!, now);
    if (await tem.findOne(User, { email: row.email! }, { fields: ['id'] })) throw emailTaken();
    const user = tem.create(User, {
      id: newId('user'),
      org,
      email: row.email!,
      role: 'owner',
      emailVerifiedAt: now,
    });
    row.user = user;
    org.kind = 'standard';
    await tem.flush();
    const keys = await elevateKeys(tem, now, 'id = ?', row.key!.id);
    return {
      userId: user.id,
      orgId: org.id,
      newlyVerified: true,
      scopesAdded: keys.length ? [...VERIFIED_EXTRA_SCOPES] : [],
      keyHashes: [...keys, ...(stale?.keys.map((k) => k.hash) ?? [])],
    };
  }
}
