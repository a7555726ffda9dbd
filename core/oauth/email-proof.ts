/**
 * The OAuth authorize page's proof of email (spec, Authentication rule 7): the person types their address, gets a
 * code by mail (core/accounts/login-codes.service.ts, `mailUnknown`) and types it here. Same code rules as sign-in,
 * but no session; an address without an account gets one on first use.
 */
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { User } from '../../db/entities/index.js';
import type { LoginVerifyBody } from '../accounts/accounts.schemas.js';
import type { EmailVerificationService } from '../accounts/email-verification.service.js';
import { emailTaken, newOrgOutcome, newOwnedOrg } from '../accounts/identity-outcomes.js';
import type { ClientInfo } from '../accounts/identity-rules.js';
import type { LoginCodesService } from '../accounts/login-codes.service.js';
import { releaseStaleSignup } from '../accounts/unproven-org.js';

export class OAuthEmailProof {
  constructor(
    private readonly loginCodes: LoginCodesService,
    private readonly verification: EmailVerificationService,
  ) {}

  /**
   * The OAuth authorize page's proof of email (spec, Authentication rule 7): the same code rules as sign-in, but
   * no session; an address without an account gets one on first use (a standard org whose verified owner it is).
   * Returns the person's org and user.
   */
  async verifyCodeForOAuth(
    input: LoginVerifyBody,
    client: ClientInfo,
  ): Promise<{ orgId: string; userId: string; email: string; created: boolean }> {
    const result = await this.loginCodes
      .consumeCode(input, client, async (tem, now) => {
        const stale = await releaseStaleSignup(tem, input.email, now);
        const user = await tem.findOne(User, { email: input.email }, { fields: ['id', 'org'] });
        if (user) {
          const outcome = await this.verification.markVerified(tem, user.id, user.org.id, 'code');
          return { outcome, view: { orgId: user.org.id, userId: user.id, email: input.email, created: false } };
        }
        const { org, user: created } = newOwnedOrg(tem, input.email, { verifiedAt: now });
        await tem.flush();
        const outcome = newOrgOutcome(created.id, org.id, stale, false);
        return { outcome, view: { orgId: org.id, userId: created.id, email: input.email, created: true } };
      })
      .catch((err: unknown) => {
        // The same new address proven twice at once: the unique index refuses the second account.
        throw err instanceof UniqueConstraintViolationException ? emailTaken() : err;
      });
    return result.view;
  }
}
