/**
 * What a billing cycle does, decided from the books (the workflow only orchestrates). A threshold cycle (hourly)
 * picks card-billed orgs whose unpaid usage reached USAGE_CHARGE_THRESHOLD_CENTS; a period-end cycle (the 1st of each
 * month, UTC) picks every card-billed org that owes anything, including orgs suspended for a failed payment (the
 * month-end charge is their retry), and the providers to pay out for the closed month.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { ValidationError } from '../errors.js';
import type { BillingCycleInput, BillingCyclePlan } from '../temporal/contracts.js';
import { STRIPE_MINIMUM_CHARGE_CENTS } from './charges.service.js';
import type { PayoutsService } from './payouts.service.js';

const PERIOD_RE = /^\d{4}-(0[1-9]|1[0-2])$/;

/** `YYYY-MM` of an instant, in UTC. */
export function periodOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** The month before the one `at` falls in: what a run on the 1st closes. */
export function previousPeriod(at: Date): string {
  return periodOf(new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - 1, 1)));
}

export class BillingCycleService {
  constructor(private readonly deps: { orm: MikroORM; config: Config; clock: Clock; payouts: PayoutsService }) {}

  async plan(input: BillingCycleInput): Promise<BillingCyclePlan> {
    if (input.period !== undefined && !PERIOD_RE.test(input.period)) {
      throw new ValidationError('period must be YYYY-MM.');
    }
    const now = this.deps.clock.now();
    const period = input.period ?? (input.reason === 'period_end' ? previousPeriod(now) : periodOf(now));
    const em = this.deps.orm.em.fork();
    const rows =
      input.reason === 'threshold'
        ? await em.execute<{ id: string }[]>(
            `select id from orgs where billing_mode = 'card' and has_payment_method and not suspended
               and credit_cents <= ? order by id`,
            [-Math.max(this.deps.config.billing.usageChargeThresholdCents, STRIPE_MINIMUM_CHARGE_CENTS)],
          )
        : await em.execute<{ id: string }[]>(
            `select id from orgs where billing_mode = 'card' and has_payment_method
               and (not suspended or suspended_reason = 'payment_failed')
               and credit_cents <= ? order by id`,
            [-STRIPE_MINIMUM_CHARGE_CENTS],
          );
    return {
      period,
      usageChargeOrgIds: rows.map((r) => r.id),
      payoutOrgIds: input.reason === 'period_end' ? await this.deps.payouts.payableOrgIds() : [],
    };
  }
}
