/**
 * The billing tests' stack: stripe-mock behind a recording proxy (the tests see what we sent), a full stack pointed
 * at it with a webhook secret, the org announcements the gateways hear, and events signed the way Stripe signs them.
 */
import { GATEWAY_CHANNELS } from '../../core/spend/gateway-events.js';
import { closeAll } from './fixtures.js';
import { sql } from './db.js';
import { startFullStack, type FullStack } from './full-stack.js';
import {
  signStripeEvent,
  startStripeMock,
  startStripeRecorder,
  type StripeMock,
  type StripeRecorder,
} from './stripe-mock.js';

/** What the gateways were told (core/spend/gateway-events.ts), with the org's committed state when it landed. */
export interface Announced {
  orgId: string;
  suspended: boolean;
  reason: string | null;
  mode: string;
}

export interface BillingStack {
  s: FullStack;
  stripe: StripeRecorder;
  signed(event: Record<string, unknown>, timestamp?: number): { payload: string; header: string };
  close(): Promise<void>;
}

/** Starts the stack with `env` on top of the Stripe settings; each announcement is pushed to `announced`. */
export async function startBillingStack(
  webhookSecret: string,
  announced: Announced[],
  env: Record<string, string> = {},
): Promise<BillingStack> {
  let mock: StripeMock | undefined;
  let stripe: StripeRecorder | undefined;
  try {
    mock = await startStripeMock();
    stripe = await startStripeRecorder(mock);
    const s = await startFullStack({
      env: {
        STRIPE_SECRET_KEY: 'sk_test_123',
        STRIPE_API_BASE: stripe.url,
        STRIPE_WEBHOOK_SECRET: webhookSecret,
        ...env,
      },
    });
    await s.services.counters.subscribe(GATEWAY_CHANNELS.org, (orgId) => {
      void sql<{ suspended: boolean; suspended_reason: string | null; billing_mode: string }>(
        s.db.url,
        'select suspended, suspended_reason, billing_mode from orgs where id = $1',
        [orgId],
      ).then(([o]) => {
        if (o) announced.push({ orgId, suspended: o.suspended, reason: o.suspended_reason, mode: o.billing_mode });
      });
    });
    const recorder = stripe;
    return {
      s,
      stripe,
      signed: (event, timestamp) => signStripeEvent(event, webhookSecret, timestamp),
      close: async () => {
        await s.close();
        await recorder.close();
        await mock?.stop();
      },
    };
  } catch (err) {
    await closeAll(stripe);
    await mock?.stop();
    throw err;
  }
}
