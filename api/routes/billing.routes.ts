/**
 * Billing: balance and packs for any credential of the org; checkout, card setup, portal and auto-reload need
 * `billing:write` (a verified person's session, or a key elevated by email verification: a bare key gets 403);
 * and the Stripe webhook, verified by signature over the raw body.
 */
import { z } from 'zod';
import { EmptyBody } from '../../core/accounts/accounts.schemas.js';
import {
  AutoReloadBody,
  AutoReloadView,
  BalanceView,
  CheckoutBody,
  CheckoutView,
  PackView,
  PortalView,
  SetupIntentView,
  WebhookResult,
} from '../../core/billing/billing.schemas.js';
import type { Services } from '../../platform/services.js';
import { readRawBody } from '../middleware/body.js';
import { env } from '../openapi/operation.js';
import { mountRoutes, route } from '../openapi/route.js';

const WEBHOOK_BODY_LIMIT = 1024 * 1024;

/** The routes that need `billing:write` (each a POST). */
const write = { method: 'post', tag: 'Billing', auth: 'bearer', scope: 'billing:write' } as const;
/** A write that reaches the payment processor: it may also answer 409 or 502 (the processor failed). */
const viaProcessor = { ...write, errors: [409, 502] } as const;

export const BILLING_ROUTES = [
  route(
    {
      method: 'get',
      path: '/v1/billing/balance',
      operationId: 'getBalance',
      summary: 'Credits, billing mode, auto-reload, payment method, suspension',
      tag: 'Billing',
      auth: 'bearer',
      success: { 200: env(BalanceView, 'The balance.') },
      errors: [404],
    },
    (_ctx, { services, principal }) => services.billing.balance(principal),
  ),
  route(
    {
      method: 'get',
      path: '/v1/billing/packs',
      operationId: 'listPacks',
      summary: 'Credit packs for sale',
      tag: 'Billing',
      auth: 'bearer',
      success: { 200: env(z.array(PackView), 'The packs.') },
    },
    (_ctx, { services }) => services.billing.packs(),
  ),
  route(
    {
      path: '/v1/billing/checkout',
      operationId: 'checkout',
      summary: "A hosted checkout URL (the payment processor's)",
      ...viaProcessor,
      body: CheckoutBody,
      success: { 200: env(CheckoutView, 'Checkout is open.') },
    },
    (_ctx, { services, principal, body }) => services.billing.checkout(principal, body),
  ),
  route(
    {
      path: '/v1/billing/setup-intent',
      operationId: 'setupIntent',
      summary: 'A card-setup intent (a person confirms the card)',
      ...viaProcessor,
      body: EmptyBody,
      success: { 200: env(SetupIntentView, 'Created.') },
    },
    (_ctx, { services, principal }) => services.billing.setupIntent(principal),
  ),
  route(
    {
      path: '/v1/billing/portal',
      operationId: 'billingPortal',
      summary: 'The billing portal URL (cards, invoices, receipts)',
      ...viaProcessor,
      body: EmptyBody,
      success: { 200: env(PortalView, 'Created.') },
    },
    (_ctx, { services, principal }) => services.billing.portal(principal),
  ),
  route(
    {
      path: '/v1/billing/auto-reload',
      operationId: 'configureAutoReload',
      summary: 'Enable or disable auto-reload (threshold and amount)',
      ...write,
      body: AutoReloadBody,
      success: { 200: env(AutoReloadView, 'Configured.') },
      errors: [409],
    },
    (_ctx, { services, principal, body }) => services.billing.configureAutoReload(principal, body),
  ),
  // The signature covers the exact bytes: use the body parser's raw text for JSON, else read the body ourselves.
  route(
    {
      method: 'post',
      path: '/v1/webhooks/stripe',
      operationId: 'stripeWebhook',
      summary: "The payment processor's webhook (verified by signature over the raw body)",
      tag: 'Billing',
      auth: 'none',
      body: { raw: ['application/json'], description: 'The event, exactly as signed.' },
      success: { 200: env(WebhookResult, 'Handled (or ignored).') },
      errors: [409],
    },
    async (ctx, { services }) => {
      const raw = ctx.request.rawBody ?? (await readRawBody(ctx, WEBHOOK_BODY_LIMIT));
      return services.webhooks.handle(raw, ctx.get('stripe-signature') || undefined);
    },
  ),
];

export const billingRoutes = (services: Services) => mountRoutes(services, BILLING_ROUTES);
