/**
 * Human signup: by the API (POST /v1/signup: an org, its owner, a consumer key, a session and a mailed verification
 * link, at once) and in the browser (issue 22: the address, then the mailed code, then signed in).
 *
 * The API signup puts the 100-cent trial credit on hold (signupCreditsWorkflow) until the email is verified
 * (email-verification.service.ts); the browser's code proves the address, so its credit is released at once.
 */
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { EmailVerification, User } from '../../db/entities/index.js';
import { CONSUMER_SCOPES, VERIFIED_EXTRA_SCOPES } from '../auth/scopes.js';
import { randomString, sha256Hex } from '../crypto.js';
import { newId } from '../ids.js';
import { verificationEmail } from './emails.js';
import { SIGNUP_CREDIT_HOLD, STARTER_CREDIT_CENTS } from '../temporal/contracts.js';
import { verifyChallenge } from './challenge.js';
import {
  emailTaken,
  invalidCode,
  newOrgOutcome,
  newOwnedOrg,
  sessionView,
  userView,
  type SessionView,
  type VerifyOutcome,
} from './identity-outcomes.js';
import { limitSignups, VERIFICATION_TOKEN_TTL_MS, type ClientInfo, type IdentityDeps } from './identity-rules.js';
import type { LOGIN_REQUEST_RESPONSE, LoginCodesService } from './login-codes.service.js';
import { releaseStaleSignup } from './unproven-org.js';
import type { VerificationFacts } from './verification-facts.js';
import type { LoginVerifyBody, SignupBody } from './accounts.schemas.js';
import type { SignupView } from './accounts.schemas.js';
export type { SignupView } from './accounts.schemas.js';

export class SignupService {
  constructor(
    private readonly deps: IdentityDeps,
    private readonly loginCodes: LoginCodesService,
  ) {}

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
    await this.holdStarterCredit(result.org.id);
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

  /** The trial credit's hold (signupCreditsWorkflow); a failure is logged, and verification starts a missing hold. */
  private async holdStarterCredit(orgId: string): Promise<void> {
    try {
      await this.deps.temporal.startSignupCredits({
        orgId: orgId,
        amountCents: STARTER_CREDIT_CENTS,
        holdFor: SIGNUP_CREDIT_HOLD,
      });
    } catch (err) {
      this.deps.logger.warn({ err, org_id: orgId }, 'could not start the signup credit hold; verification will');
    }
  }

  /**
   * `/signup`: the signup budget per client address and the bot challenge (spec: required in production) first, then
   * a sign-up code for the address. An address that has an account gets a sign-in code instead, which the same page
   * takes: the answer is the same either way (no enumeration), and no account exists until the code proves the address.
   */
  async requestSignupCode(input: SignupBody, client: ClientInfo): Promise<typeof LOGIN_REQUEST_RESPONSE> {
    await this.checkSignupAllowed(input.challenge_token, client);
    return this.loginCodes.requestLoginCode({ email: input.email }, client, { purpose: 'signup' });
  }

  private async checkSignupAllowed(challengeToken: string | undefined, client: ClientInfo): Promise<void> {
    const { config } = this.deps;
    await limitSignups(this.deps, client);
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
    const outcome = await this.loginCodes
      .consumeCode(
        input,
        client,
        async (tem, now) => {
          const stale = await releaseStaleSignup(tem, input.email, now);
          if (await tem.findOne(User, { email: input.email }, { fields: ['id'] })) {
            return this.loginCodes.signInMatched(tem, now, input.email, client);
          }
          const { org, user } = newOwnedOrg(tem, input.email, { name, starterCredit: true, verifiedAt: now });
          const session = this.deps.sessions.create(tem, { userId: user.id, orgId: org.id, ...client });
          await tem.flush();
          await this.deps.temporal.releaseSignupCredits({
            orgId: org.id,
            amountCents: STARTER_CREDIT_CENTS,
            holdFor: SIGNUP_CREDIT_HOLD,
          });
          const verified: VerifyOutcome = { ...newOrgOutcome(user.id, org.id, stale, true), creditsReleased: true };
          return { outcome: verified, view: sessionView(session, org.id, user) };
        },
        'signup',
      )
      .catch((err: unknown) => {
        throw err instanceof UniqueConstraintViolationException ? emailTaken() : err;
      });
    if (!outcome.view) throw invalidCode();
    return outcome.view;
  }
}
