/**
 * Stripe Connect onboarding for providers (payouts): create the connected account once (idempotency key per org),
 * hand back a fresh onboarding link for the person to complete Stripe's identity steps, and run
 * connectOnboardingWorkflow, which waits for Stripe's account.updated (forwarded by the billing webhook).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type Stripe from 'stripe';
import { Org } from '../../db/entities/index.js';
import type { Principal } from '../auth/scopes.js';
import type { Config } from '../config.js';
import { NotFoundError } from '../errors.js';
import type { AccountUpdate } from '../temporal/contracts.js';
import type { TemporalService } from '../temporal/temporal.service.js';
import { requireStripe } from './stripe.js';
import type { ConnectOnboardView } from './billing.schemas.js';
export type { ConnectOnboardView } from './billing.schemas.js';

export class ConnectService {
  constructor(
    private readonly deps: { orm: MikroORM; config: Config; stripe: Stripe | undefined; temporal: TemporalService },
  ) {}

  async onboard(principal: Principal): Promise<ConnectOnboardView> {
    const stripe = requireStripe(this.deps.stripe);
    const em = this.deps.orm.em.fork();
    const org = await em.findOneOrFail(Org, principal.orgId);
    if (!org.stripeAccountId) {
      const account = await stripe.accounts.create(
        { type: 'express', metadata: { org_id: org.id } },
        { idempotencyKey: `connect:${org.id}:account` },
      );
      org.stripeAccountId = account.id;
      org.connectStatus = 'pending';
      await em.flush();
    }
    const base = this.deps.config.urls.publicBase;
    const link = await stripe.accountLinks.create({
      account: org.stripeAccountId,
      type: 'account_onboarding',
      refresh_url: `${base}/connect/refresh`,
      return_url: `${base}/connect/return`,
    });
    const { workflowId } = await this.deps.temporal.startConnectOnboarding({
      orgId: org.id,
      accountId: org.stripeAccountId,
    });
    return {
      url: link.url,
      account_id: org.stripeAccountId,
      status: org.connectStatus,
      expires_at: link.expires_at ? new Date(link.expires_at * 1000).toISOString() : null,
      workflow_id: workflowId,
    };
  }

  /** Where the org's Connect onboarding stands (`enabled` once the workflow has seen payouts enabled). */
  async statusOf(orgId: string): Promise<string> {
    const org = await this.deps.orm.em.fork().findOne(Org, { id: orgId }, { fields: ['connectStatus'] });
    return org?.connectStatus ?? 'none';
  }

  /** Activity: record where onboarding stands (only for the account the org holds). */
  async recordStatus(input: { orgId: string; accountId: string; status: 'pending' | 'enabled' }): Promise<void> {
    const updated = await this.deps.orm.em
      .fork()
      .nativeUpdate(Org, { id: input.orgId, stripeAccountId: input.accountId }, { connectStatus: input.status });
    if (updated === 0) throw new NotFoundError(`Org ${input.orgId} does not hold account ${input.accountId}.`);
  }

  /** From the billing webhook: Stripe's account.updated for a connected account. */
  async accountUpdated(accountId: string, update: AccountUpdate): Promise<boolean> {
    const org = await this.deps.orm.em.fork().findOne(Org, { stripeAccountId: accountId });
    if (!org) return false;
    return this.deps.temporal.signalAccountUpdated(org.id, update);
  }
}
