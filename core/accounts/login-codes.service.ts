/**
 * Passwordless sign-in by emailed code, and sign-out.
 *
 * Sign-in codes: 6 digits from the CSPRNG, 10 minutes, single use, void after 5 wrong tries, stored as an HMAC.
 * Requests for known and unknown addresses do the same work and get the same answer; mail goes out in the background.
 * A new request never voids a live code, and the limits are counted per requesting address, so a stranger cannot
 * lock a person out by asking for codes (docs/decisions.md, issue 10). The first proof by code verifies the email
 * (email-verification.service.ts). The sign-up page (signup.service.ts) and the OAuth authorize page
 * (core/oauth/email-proof.ts) check their codes here too.
 */
import { createHmac } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { LoginCode, User } from '../../db/entities/index.js';
import { randomDigits, safeEqual, sha256Hex } from '../crypto.js';
import { RateLimitedError } from '../errors.js';
import { newId } from '../ids.js';
import { loginCodeEmail, noAccountEmail, signupCodeEmail } from './emails.js';
import type { EmailVerificationService } from './email-verification.service.js';
import {
  abandonedOutcome,
  invalidCode,
  sessionView,
  type SessionView,
  type VerifyOutcome,
} from './identity-outcomes.js';
import {
  hitLimit,
  LOGIN_CODE_MAX_ATTEMPTS,
  LOGIN_CODE_TTL_MS,
  LOGIN_LIVE_CODES_CHECKED,
  RATE_LIMITS,
  type ClientInfo,
  type IdentityDeps,
} from './identity-rules.js';
import { releaseStaleSignup } from './unproven-org.js';
import type { LoginRequestBody, LoginRequestView, LoginVerifyBody, LogoutView } from './accounts.schemas.js';

export const LOGIN_REQUEST_RESPONSE = {
  sent: true,
  message: 'If an account exists for this email, a 6-digit code is on its way. It expires in 10 minutes.',
  expires_in_seconds: LOGIN_CODE_TTL_MS / 1000,
} as const satisfies LoginRequestView;

/** Which path a code is for: sign-in codes and sign-up codes verify only on their own path. */
export type CodePurpose = 'login' | 'signup';

export class LoginCodesService {
  /** Current first; the previous SECRETS_KEYs only verify, so codes sent before a key rotation still work. */
  private readonly peppers: readonly Buffer[];

  constructor(
    private readonly deps: IdentityDeps,
    private readonly verification: EmailVerificationService,
  ) {
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
    await hitLimit(this.deps.counters, `login:ip:${client.ip}`, RATE_LIMITS.loginRequestPerIp, message);
    await hitLimit(
      this.deps.counters,
      `login:email-ip:${email}:${client.ip}`,
      RATE_LIMITS.loginRequestPerEmailAndIp,
      message,
    );
    await hitLimit(this.deps.counters, `login:email:${email}`, RATE_LIMITS.loginRequestPerEmail, message);

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
  async signInMatched(
    tem: EntityManager,
    now: Date,
    email: string,
    client: ClientInfo,
  ): Promise<{ outcome: VerifyOutcome; view: SessionView }> {
    const user = await tem.findOneOrFail(User, { email });
    const verified = await this.verification.markVerified(tem, user.id, user.org.id, 'code');
    const session = this.deps.sessions.create(tem, { userId: user.id, orgId: user.org.id, ...client });
    await tem.flush();
    if (verified.newlyVerified) user.emailVerifiedAt = now;
    return { outcome: verified, view: sessionView(session, user.org.id, user) };
  }
  /**
   * Check a code against the address's live codes (limits, constant-time compare, attempts) and, on a match, consume
   * every live code of the address and run `onMatch` in the same transaction. Any failure is the same 401.
   */
  async consumeCode<T>(
    input: LoginVerifyBody,
    client: ClientInfo,
    onMatch: (tem: EntityManager, now: Date) => Promise<{ outcome: VerifyOutcome; view: T } | undefined>,
    purpose: CodePurpose = 'login',
  ): Promise<{ outcome: VerifyOutcome; view: T }> {
    const { orm, clock, counters } = this.deps;
    await hitLimit(
      this.deps.counters,
      `login-verify:ip:${client.ip}`,
      RATE_LIMITS.loginVerifyPerIp,
      'Too many attempts; try later.',
    );
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
    await this.verification.afterVerified(attempt.outcome);
    return { outcome: attempt.outcome, view: attempt.view };
  }

  async logout(sessionId: string): Promise<LogoutView> {
    await this.deps.sessions.revoke(sessionId);
    return { signed_out: true };
  }
}
