/**
 * The Stripe client, from STRIPE_SECRET_KEY and STRIPE_API_BASE (stripe-mock in tests and in the embedded mode).
 * Vendor types stay inside core/billing: the rest of the code sees our own shapes.
 */
import Stripe from 'stripe';
import type { Config } from '../config.js';
import { ServiceUnavailableError } from '../errors.js';

export type StripeClient = Stripe;

export function createStripeClient(stripe: Config['stripe']): Stripe | undefined {
  if (!stripe.secretKey) return undefined;
  const base = stripe.apiBase ? new URL(stripe.apiBase) : undefined;
  return new Stripe(stripe.secretKey, {
    maxNetworkRetries: 2,
    timeout: 15_000,
    telemetry: false,
    ...(base
      ? {
          host: base.hostname,
          port: Number(base.port || (base.protocol === 'https:' ? 443 : 80)),
          protocol: base.protocol === 'https:' ? 'https' : 'http',
        }
      : {}),
  });
}

export function requireStripe(stripe: Stripe | undefined): Stripe {
  if (!stripe) {
    throw new ServiceUnavailableError(
      'Payments are not configured on this marketplace (STRIPE_SECRET_KEY is not set).',
    );
  }
  return stripe;
}
