/**
 * People: human signup, email verification, passwordless sign-in and sign-out.
 *
 * - Signup creates a standard org, its owner, a consumer-scope key, a session and a verification token, and puts
 *   the 100-cent trial credit on hold (signupCreditsWorkflow) until the email is verified.
 * - Verifying the email (by token, or by the first successful sign-in code, which proves the same thing) adds
 *   billing:write and provider:write to the signup key in place and releases the held credit, exactly once.
 * - Agent-first elevation: an anonymous org's root key attaches an email (POST /v1/me/email); the mailed link
 *   (same mail and token machinery as signup) creates the org's owner with that email and elevates that key in place.
 * - Sign-in codes: 6 digits from the CSPRNG, 10 minutes, single use, void after 5 wrong tries, stored as an HMAC.
 *   Requests for known and unknown addresses do the same work and get the same answer; mail goes out in the background.
 *   A new request never voids a live code, and the limits are counted per requesting address, so a stranger cannot
 *   lock a person out by asking for codes (docs/decisions.md, issue 10).
 */
import { createHmac } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { LockMode, type EntityManager, type MikroORM } from '@mikro-orm/postgresql';
import { ApiKey, EmailVerification, LoginCode, Org, User, type IEmailVerification } from '../../db/entities/index.js';
import { CONSUMER_SCOPES, VERIFIED_EXTRA_SCOPES, type Principal } from '../auth/scopes.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { CounterStore } from '../counters/index.js';
import { randomDigits, randomString, safeEqual, sha256Hex } from '../crypto.js';
import { ForbiddenError, RateLimitedError, UnauthenticatedError, ValidationError } from '../errors.js';
import { newId } from '../ids.js';
import { lockOrg } from '../db/sql.js';
import type { KeysService } from '../keys/keys.service.js';
import type { Logger } from '../logger.js';
import type { Mailer } from '../mail/mailer.js';
import { revokedBeforeProofEmail } from './revocation-email.js';
import { loginCodeEmail, noAccountEmail, signupCodeEmail, verificationEmail } from './emails.js';
import type { SessionsService } from '../sessions/sessions.service.js';
import { SIGNUP_CREDIT_HOLD, STARTER_CREDIT_CENTS } from '../temporal/contracts.js';
import type { TemporalService } from '../temporal/temporal.service.js';
import { verifyChallenge } from './challenge.js';
import {
  abandonedOutcome,
  elevateKeys,
  emailTaken,
  hasOwner,
  invalidCode,
  userView,
  type VerifyOutcome,
} from './identity-outcomes.js';
import { releaseStaleSignup, revokedAnything, revokeOrgCredentials } from './unproven-org.js';
import { loadVerificationFacts, type VerificationFacts } from './verification-facts.js';
import type {
  AttachEmailBody,
  AttachEmailView,
  LoginRequestBody,
  LoginVerifyBody,
  SessionView,
  SignupBody,
  SignupView,
  VerifiedView,
  VerifyEmailBody,
} from './accounts.schemas.js';
export type { AttachEmailView, SessionView, SignupView, UserView, VerifiedView } from './accounts.schemas.js';

export const LOGIN_CODE_TTL_MS = 10 * 60_000;
export const LOGIN_CODE_MAX_ATTEMPTS = 5;
export const VERIFICATION_TOKEN_TTL_MS = 24 * 3_600_000;
/** How long a verify request waits for the released credit to land, so its answer shows the new balance. */
const RELEASE_WAIT_MS = 5_000;

export const RATE_LIMITS = {
  /** Code requests for one address from one client address (a stranger spends their own quota, not the owner's). */
  loginRequestPerEmailAndIp: { limit: 5, windowMs: 15 * 60_000 },
  /** Code requests for one address from everywhere: a ceiling against distributed flooding and guessing, above what
   * one client address can reach (5 per 15 minutes is at most 25 in any hour). */
  loginRequestPerEmail: { limit: 30, windowMs: 60 * 60_000 },
  loginRequestPerIp: { limit: 30, windowMs: 15 * 60_000 },
  loginVerifyPerIp: { limit: 60, windowMs: 15 * 60_000 },
  /** Wrong codes for one address from one client address; past it that client address gets 429 for that email. */
  loginWrongPerEmailAndIp: { limit: LOGIN_CODE_MAX_ATTEMPTS, windowMs: 15 * 60_000 },
  /** Email-attach requests per org (each one mails a link). */
  attachEmailPerOrg: { limit: 5, windowMs: 60 * 60_000 },
} as const;

/**
 * Every live code of an address works (a new request never voids the one in the owner's mailbox), so a sign-in
 * compares the guess with all of them: at most the per-address ceiling, since codes live 10 minutes. A wrong guess
 * counts against each, so guesses per address stay 5 per batch of codes: at worst 5 x 30 chances in 10^6 per hour.
 */
export const LOGIN_LIVE_CODES_CHECKED = RATE_LIMITS.loginRequestPerEmail.limit;

export interface ClientInfo {
  ip: string;
  userAgent?: string;
}

export const LOGIN_REQUEST_RESPONSE = {
  sent: true,
  message: 'If an account exists for this email, a 6-digit code is on its way. It expires in 10 minutes.',
  expires_in_seconds: LOGIN_CODE_TTL_MS / 1000,
} as const;

export interface IdentityDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  counters: CounterStore;
  keys: KeysService;
  sessions: SessionsService;
  temporal: TemporalService;
  mailer: Mailer;
  logger: Logger;
}

export class IdentityService {
  /** Current first; the previous SECRETS_KEYs only verify, so codes sent before a key rotation still work. */
  private readonly peppers: readonly Buffer[];

  constructor(private readonly deps: IdentityDeps) {
    // Codes have only 10^6 values, so a plain hash would fall to a dictionary if the table leaked: key it.
    const { secretsKey, previousSecretsKeys } = deps.config;
    this.peppers = secretsKey
      ? [secretsKey, ...previousSecretsKeys]
      : [Buffer.from('svc-marketplace-development-pepper')];
  }

  /** A sign-up code is hashed apart from sign-in codes: each verifies only on its own path. */
  private codeHash(email: string, code: string, pepper = this.peppers[0]!, purpose: CodePurpose = 'login'): string {
    const scope = purpose === 'signup' ? 'signup:' : '';
    return createHmac('sha256', pepper).update(`${scope}${email}:${code}`).digest('hex');
  }

  private async limit(name: string, bucket: { limit: number; windowMs: number }, message: string): Promise<void> {
    const hit = await this.deps.counters.hitWindow(`rl:${name}`, bucket.limit, bucket.windowMs);
    if (!hit.allowed) throw new RateLimitedError(hit.resetMs / 1000, message);
  }

  // ---- signup -------------------------------------------------------------------------------------------------

  async signup(input: SignupBody, client: ClientInfo): Promise<SignupView> {
    const { config, orm, clock } = this.deps;
    await this.checkSignupAllowed(input.challenge_token, client);

    const verificationToken = randomString(43);
    const result = await orm.em
      .fork()
      .transactional(async (tem) => {
        const now = clock.now();
        const stale = await releaseStaleSignup(tem, input.email, now);
        if (await tem.findOne(User, { email: input.email }, { fields: ['id'] })) throw emailTaken();
        const { org, user } = newOwnedOrg(tem, input.email, { name: input.name, starterCredit: true });
        const { key, plaintext } = this.deps.keys.create(tem, {
          orgId: org.id,
          name: 'default',
          scopes: CONSUMER_SCOPES,
          source: 'signup',
        });
        const session = this.deps.sessions.create(tem, { userId: user.id, orgId: org.id, ...client });
        tem.create(EmailVerification, {
          id: newId('emailVerification'),
          tokenHash: sha256Hex(verificationToken),
          user,
          createdAt: now,
          expiresAt: new Date(now.getTime() + VERIFICATION_TOKEN_TTL_MS),
        });
        await tem.flush();
        return { org, user, key, plaintext, session, stale };
      })
      .catch((err: unknown) => {
        // Two signups with one email at once: both pass the check above, the unique index refuses the second.
        throw err instanceof UniqueConstraintViolationException ? emailTaken() : err;
      });

    await this.deps.keys.invalidateMany(result.stale?.keys.map((k) => k.hash) ?? [], result.stale?.orgId);
    // After commit: the hold and the mail. Neither failure undoes the signup: verification starts a missing hold
    // (signal-with-start), and a lost mail is recovered by signing in with a code, which also verifies the email.
    try {
      await this.deps.temporal.startSignupCredits({
        orgId: result.org.id,
        amountCents: STARTER_CREDIT_CENTS,
        holdFor: SIGNUP_CREDIT_HOLD,
      });
    } catch (err) {
      this.deps.logger.warn(
        { err, org_id: result.org.id },
        'could not start the signup credit hold; verification will',
      );
    }
    const facts: VerificationFacts = {
      kind: 'signup',
      email: input.email,
      orgId: result.org.id,
      orgName: result.org.name ?? null,
      orgCreatedAt: result.org.createdAt,
      keys: [{ id: result.key.id, name: result.key.name }],
      gains: VERIFIED_EXTRA_SCOPES,
    };
    this.deps.mailer.sendInBackground(verificationEmail(input.email, config.urls.publicBase, verificationToken, facts));

    return {
      account: { org_id: result.org.id, ...userView(result.user) },
      api_key: result.plaintext,
      key_id: result.key.id,
      session_token: result.session.token,
      session_expires_at: result.session.expiresAt.toISOString(),
      credit_cents: 0,
      starter_credits: { amount_cents: STARTER_CREDIT_CENTS, status: 'withheld', released_by: 'email_verification' },
    };
  }

  // ---- email verification -------------------------------------------------------------------------------------

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
  private async markVerified(
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

  private async afterVerified(outcome: VerifyOutcome): Promise<void> {
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
    await this.limit(
      `signup:ip:${client.ip}`,
      { limit: config.limits.signupPerHour, windowMs: 3_600_000 },
      'Too many signups from this address; try later.',
    );
    await this.limit(
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

  // ---- passwordless sign-in -----------------------------------------------------------------------------------

  /**
   * `mailUnknown`: also mail an address no account has yet (the OAuth authorize page, where proving the address
   * creates the account). The answer is the same either way.
   */
  async requestLoginCode(
    input: LoginRequestBody,
    client: ClientInfo,
    options: { mailUnknown?: boolean; purpose?: CodePurpose } = {},
  ): Promise<typeof LOGIN_REQUEST_RESPONSE> {
    const { orm, clock } = this.deps;
    const message = 'Too many sign-in requests; wait a few minutes and try again.';
    const email = sha256Hex(input.email);
    // Per client address first: a request refused there never reaches the address-wide ceiling.
    await this.limit(`login:ip:${client.ip}`, RATE_LIMITS.loginRequestPerIp, message);
    await this.limit(`login:email-ip:${email}:${client.ip}`, RATE_LIMITS.loginRequestPerEmailAndIp, message);
    await this.limit(`login:email:${email}`, RATE_LIMITS.loginRequestPerEmail, message);

    const code = randomDigits(6);
    const user = await orm.em.fork().transactional(async (tem) => {
      const now = clock.now();
      // Earlier codes stay live: voiding them would let anyone who knows the address cancel the owner's code.
      tem.create(LoginCode, {
        id: newId('loginCode'),
        email: input.email,
        codeHash: this.codeHash(input.email, code, undefined, options.purpose),
        createdAt: now,
        expiresAt: new Date(now.getTime() + LOGIN_CODE_TTL_MS),
      });
      const stale = await releaseStaleSignup(tem, input.email, now);
      const found = await tem.findOne(User, { email: input.email }, { fields: ['id'] });
      await tem.flush();
      return { found, stale };
    });
    await this.deps.keys.invalidateMany(user.stale?.keys.map((k) => k.hash) ?? [], user.stale?.orgId);
    this.deps.mailer.sendInBackground(this.codeMail(input.email, code, user.found !== null, options));
    return LOGIN_REQUEST_RESPONSE;
  }

  /** Which mail a code request sends: the code, or for an unknown address on sign-in, where to sign up. */
  private codeMail(
    email: string,
    code: string,
    known: boolean,
    options: { mailUnknown?: boolean; purpose?: CodePurpose },
  ) {
    if (known || options.mailUnknown) return loginCodeEmail(email, code);
    if (options.purpose === 'signup') return signupCodeEmail(email, code);
    return noAccountEmail(email, this.deps.config.urls.publicBase);
  }

  // ---- sign-up in the browser (issue 22): email, then the mailed code, then signed in -----------------------------

  /**
   * `/signup`: the signup budget per client address and the bot challenge (spec: required in production) first, then
   * a sign-up code for the address. An address that has an account gets a sign-in code instead, which the same page
   * takes: the answer is the same either way (no enumeration), and no account exists until the code proves the address.
   */
  async requestSignupCode(input: SignupBody, client: ClientInfo): Promise<typeof LOGIN_REQUEST_RESPONSE> {
    await this.checkSignupAllowed(input.challenge_token, client);
    return this.requestLoginCode({ email: input.email }, client, { purpose: 'signup' });
  }

  private async checkSignupAllowed(challengeToken: string | undefined, client: ClientInfo): Promise<void> {
    const { config } = this.deps;
    await this.limit(
      `signup:ip:${client.ip}`,
      { limit: config.limits.signupPerHour, windowMs: 3_600_000 },
      'Too many signups from this address; try later.',
    );
    const { challenge } = config;
    const settings = {
      required: config.env === 'production',
      verifyUrl: challenge.verifyUrl,
      secret: challenge.secret,
    };
    await verifyChallenge(settings, challengeToken, client.ip);
  }

  /**
   * The sign-up code proven: a new address gets a standard org whose verified owner it is, its starter credit
   * released at once (this path passed the bot challenge), and a session; a known address is signed in, exactly as by
   * a sign-in code (an unproven org's earlier credentials revoked first).
   */
  async verifySignupCode(input: LoginVerifyBody, client: ClientInfo, name?: string): Promise<SessionView> {
    const outcome = await this.consumeCode(
      input,
      client,
      async (tem, now) => {
        const stale = await releaseStaleSignup(tem, input.email, now);
        if (await tem.findOne(User, { email: input.email }, { fields: ['id'] })) {
          return this.signInMatched(tem, now, input.email, client);
        }
        const { org, user } = newOwnedOrg(tem, input.email, { name, starterCredit: true, verifiedAt: now });
        const session = this.deps.sessions.create(tem, { userId: user.id, orgId: org.id, ...client });
        await tem.flush();
        await this.deps.temporal.releaseSignupCredits({
          orgId: org.id,
          amountCents: STARTER_CREDIT_CENTS,
          holdFor: SIGNUP_CREDIT_HOLD,
        });
        const verified: VerifyOutcome = {
          userId: user.id,
          orgId: org.id,
          newlyVerified: true,
          scopesAdded: [],
          keyHashes: stale?.keys.map((k) => k.hash) ?? [],
          keysOrgId: stale?.orgId,
          creditsReleased: true,
        };
        return { outcome: verified, view: sessionView(session, org.id, user) };
      },
      'signup',
    ).catch((err: unknown) => {
      throw err instanceof UniqueConstraintViolationException ? emailTaken() : err;
    });
    if (!outcome.view) throw invalidCode();
    return outcome.view;
  }

  async verifyLoginCode(input: LoginVerifyBody, client: ClientInfo): Promise<SessionView> {
    const outcome = await this.consumeCode(input, client, async (tem, now) => {
      // A stale unverified signup is abandoned, not handed over: the address is then as unknown as any other.
      const stale = await releaseStaleSignup(tem, input.email, now);
      if (!(await tem.findOne(User, { email: input.email }, { fields: ['id'] }))) {
        return stale && { outcome: abandonedOutcome(stale), view: undefined };
      }
      return this.signInMatched(tem, now, input.email, client);
    });
    if (!outcome.view) throw invalidCode();
    return outcome.view;
  }

  /** A proven code of an address that has an account: verify it (first proof) and open a session. */
  private async signInMatched(
    tem: EntityManager,
    now: Date,
    email: string,
    client: ClientInfo,
  ): Promise<{ outcome: VerifyOutcome; view: SessionView }> {
    const user = await tem.findOneOrFail(User, { email });
    const verified = await this.markVerified(tem, user.id, user.org.id, 'code');
    const session = this.deps.sessions.create(tem, { userId: user.id, orgId: user.org.id, ...client });
    await tem.flush();
    if (verified.newlyVerified) user.emailVerifiedAt = now;
    return { outcome: verified, view: sessionView(session, user.org.id, user) };
  }

  /**
   * The OAuth authorize page's proof of email (spec, Authentication rule 7): the same code rules as sign-in, but
   * no session; an address without an account gets one on first use (a standard org whose verified owner it is).
   * Returns the person's org and user.
   */
  async verifyCodeForOAuth(
    input: LoginVerifyBody,
    client: ClientInfo,
  ): Promise<{ orgId: string; userId: string; email: string; created: boolean }> {
    const result = await this.consumeCode(input, client, async (tem, now) => {
      const stale = await releaseStaleSignup(tem, input.email, now);
      const user = await tem.findOne(User, { email: input.email }, { fields: ['id', 'org'] });
      if (user) {
        const outcome = await this.markVerified(tem, user.id, user.org.id, 'code');
        return { outcome, view: { orgId: user.org.id, userId: user.id, email: input.email, created: false } };
      }
      const { org, user: created } = newOwnedOrg(tem, input.email, { verifiedAt: now });
      await tem.flush();
      const outcome: VerifyOutcome = {
        userId: created.id,
        orgId: org.id,
        newlyVerified: false,
        scopesAdded: [],
        keyHashes: stale?.keys.map((k) => k.hash) ?? [],
        keysOrgId: stale?.orgId,
      };
      return { outcome, view: { orgId: org.id, userId: created.id, email: input.email, created: true } };
    }).catch((err: unknown) => {
      // The same new address proven twice at once: the unique index refuses the second account.
      throw err instanceof UniqueConstraintViolationException ? emailTaken() : err;
    });
    return result.view;
  }

  /**
   * Check a code against the address's live codes (limits, constant-time compare, attempts) and, on a match, consume
   * every live code of the address and run `onMatch` in the same transaction. Any failure is the same 401.
   */
  private async consumeCode<T>(
    input: LoginVerifyBody,
    client: ClientInfo,
    onMatch: (tem: EntityManager, now: Date) => Promise<{ outcome: VerifyOutcome; view: T } | undefined>,
    purpose: CodePurpose = 'login',
  ): Promise<{ outcome: VerifyOutcome; view: T }> {
    const { orm, clock, counters } = this.deps;
    await this.limit(`login-verify:ip:${client.ip}`, RATE_LIMITS.loginVerifyPerIp, 'Too many attempts; try later.');
    // Wrong codes are limited per email and client address: one stranger cannot keep burning the owner's codes.
    const wrongKey = `rl:login-wrong:${sha256Hex(input.email)}:${client.ip}`;
    const wrong = RATE_LIMITS.loginWrongPerEmailAndIp;
    if (Number((await counters.get(wrongKey)) ?? 0) >= wrong.limit) {
      const hit = await counters.hitWindow(wrongKey, wrong.limit, wrong.windowMs); // refused: not counted
      if (!hit.allowed) throw new RateLimitedError(hit.resetMs / 1000, 'Too many wrong codes; try later.');
    }
    const invalid = invalidCode;

    type Attempt = { kind: 'wrong' } | { kind: 'ok'; view: T; outcome: VerifyOutcome };
    const attempt: Attempt | undefined = await orm.em.fork().transactional(async (tem) => {
      const now = clock.now();
      const rows = await tem.execute<{ id: string; code_hash: string }[]>(
        `select id, code_hash from login_codes
          where email = ? and consumed_at is null and expires_at > ? and attempts < ?
          order by created_at desc limit ?
          for update`,
        [input.email, now, LOGIN_CODE_MAX_ATTEMPTS, LOGIN_LIVE_CODES_CHECKED],
      );
      if (rows.length === 0) return undefined;
      const hashes = this.peppers.map((pepper) => this.codeHash(input.email, input.code, pepper, purpose));
      // Compare with every live code under every key (constant time each), not stopping at the first match.
      const match = rows.filter((r) => hashes.reduce((hit, hash) => safeEqual(hash, r.code_hash) || hit, false))[0];
      if (!match) {
        // A wrong guess counts against every live code: more codes in flight must not mean more guesses.
        await tem.execute(
          `update login_codes set attempts = attempts + 1 where id in (${rows.map(() => '?').join(',')})`,
          rows.map((r) => r.id),
          'run',
        );
        return { kind: 'wrong' as const };
      }
      // Signed in: this code is used and every other live code of the address is void.
      await tem.execute(
        'update login_codes set consumed_at = ? where email = ? and consumed_at is null',
        [now, input.email],
        'run',
      );
      const matched = await onMatch(tem, now);
      return matched ? { kind: 'ok' as const, ...matched } : undefined;
    });
    if (attempt?.kind === 'wrong') await counters.hitWindow(wrongKey, wrong.limit, wrong.windowMs);
    if (!attempt || attempt.kind === 'wrong') throw invalid();
    await this.afterVerified(attempt.outcome);
    return { outcome: attempt.outcome, view: attempt.view };
  }

  async logout(sessionId: string): Promise<{ signed_out: true }> {
    await this.deps.sessions.revoke(sessionId);
    return { signed_out: true };
  }
}

/** Which path a code is for: sign-in codes and sign-up codes verify only on their own path. */
type CodePurpose = 'login' | 'signup';

function sessionView(
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
function newOwnedOrg(
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
