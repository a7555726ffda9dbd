/**
 * Billing: balance and packs for any credential of the org; checkout, card setup, portal and auto-reload need
 * `billing:write` (a verified person's session, or a key elevated by email verification: a bare key gets 403);
 * and the Stripe webhook, verified by signature over the raw body.
 */
import Router from '@koa/router';
import { EmptyBody } from '../../core/accounts/accounts.schemas.js';
import { AutoReloadBody, CheckoutBody } from '../../core/billing/billing.schemas.js';
import { ok } from '../../core/envelope.js';
import type { Services } from '../../platform/services.js';
import type { AppState } from '../context.js';
import { auth, principalOf } from '../middleware/auth.js';
import { parseBody, readRawBody } from '../middleware/body.js';

const WEBHOOK_BODY_LIMIT = 1024 * 1024;

export function billingRoutes(services: Services): Router<AppState> {
  const router = new Router<AppState>();
  const write = auth(services, 'billing:write');

  router.get('/v1/billing/balance', auth(services), async (ctx) => {
    ctx.body = ok(await services.billing.balance(principalOf(ctx.state)), ctx.state.requestId);
  });

  router.get('/v1/billing/packs', auth(services), (ctx) => {
    ctx.body = ok(services.billing.packs(), ctx.state.requestId);
  });

  router.post('/v1/billing/checkout', write, async (ctx) => {
    const body = parseBody(ctx, CheckoutBody);
    ctx.body = ok(await services.billing.checkout(principalOf(ctx.state), body), ctx.state.requestId);
  });

  router.post('/v1/billing/setup-intent', write, async (ctx) => {
    parseBody(ctx, EmptyBody);
    ctx.body = ok(await services.billing.setupIntent(principalOf(ctx.state)), ctx.state.requestId);
  });

  router.post('/v1/billing/portal', write, async (ctx) => {
    parseBody(ctx, EmptyBody);
    ctx.body = ok(await services.billing.portal(principalOf(ctx.state)), ctx.state.requestId);
  });

  router.post('/v1/billing/auto-reload', write, async (ctx) => {
    const body = parseBody(ctx, AutoReloadBody);
    ctx.body = ok(await services.billing.configureAutoReload(principalOf(ctx.state), body), ctx.state.requestId);
  });

  // The signature covers the exact bytes: use the body parser's raw text for JSON, else read the body ourselves.
  router.post('/v1/webhooks/stripe', async (ctx) => {
    const raw = ctx.request.rawBody ?? (await readRawBody(ctx, WEBHOOK_BODY_LIMIT));
    const result = await services.webhooks.handle(raw, ctx.get('stripe-signature') || undefined);
    ctx.body = ok(result, ctx.state.requestId);
  });

  return router;
}
