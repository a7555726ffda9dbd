/**
 * The embedded payments' test pages (core/billing/embedded-payments.ts): where `npm start`'s checkouts and card setups
 * land instead of Stripe's hosted pages when payments run on stripe-mock. A person sees what they are paying for,
 * presses "Pay", and the signed event goes through the real webhook handler, then back to where the caller asked.
 * Served only in that mode: otherwise every path here is 404.
 */
import Router from '@koa/router';
import {
  EMBEDDED_PAYMENTS_PATH,
  EMBEDDED_TEST_CARD,
  type EmbeddedPayments,
} from '../../core/billing/embedded-payments.js';
import { NotFoundError } from '../../core/errors.js';
import { escapeHtml } from '../../core/html.js';
import type { Services } from '../../platform/services.js';
import type { AppContext, AppState } from '../context.js';
import { usd as dollars } from './dollars.js';
import { csrfToken, errorLine, hidden, pageHandler, paramOf, readFormParams, render } from './forms.js';
import { pageOperation } from '../openapi/operation.js';

const NOTICE = `<p class="muted">Test mode: this marketplace runs on embedded payments (no Stripe account configured), so
no card is charged. A live deployment sets <code>STRIPE_SECRET_KEY</code> and this step is Stripe's own page.</p>`;

function embedded(services: Services): EmbeddedPayments {
  if (!services.embeddedPayments) throw new NotFoundError();
  return services.embeddedPayments;
}

function query(ctx: AppContext): URLSearchParams {
  return new URLSearchParams(ctx.querystring);
}

function failed(ctx: AppContext, err: { status: number; message: string }) {
  render(ctx, err.status, 'Test payment', errorLine(err.message));
}

/** A checkout: what is bought and the Pay button (GET); its POST completes it and goes back to the caller. */
function checkoutPages(router: Router<AppState>, services: Services): void {
  router.get(
    '/checkout/:paymentId',
    pageHandler(async (ctx) => {
      const payments = embedded(services);
      const id = paramOf(ctx, 'paymentId');
      const back = payments.checkoutReturns(id, query(ctx));
      const checkout = await payments.checkout(id);
      const action = `${EMBEDDED_PAYMENTS_PATH}/checkout/${encodeURIComponent(id)}?${ctx.querystring}`;
      const body =
        checkout.status === 'paid'
          ? `<p class="ok" role="status">This checkout is paid.</p><p><a href="${escapeHtml(back.success)}">Continue</a></p>`
          : `<p>Marketplace credits: <strong>${dollars(checkout.creditCents)}</strong> of credit for
<strong>${dollars(checkout.amountCents)}</strong>.</p>
<form method="post" action="${escapeHtml(action)}">
  ${hidden('csrf', csrfToken(ctx))}
  <label for="card">Card</label>
  <input id="card" name="card" value="${EMBEDDED_TEST_CARD}" readonly>
  <button type="submit">Pay ${dollars(checkout.amountCents)}</button>
</form>
<p><a href="${escapeHtml(back.cancel)}">Cancel and go back</a></p>`;
      render(ctx, 200, 'Test payment', `${body}\n${NOTICE}`);
    }, failed),
  );

  router.post(
    '/checkout/:paymentId',
    pageHandler(async (ctx) => {
      const payments = embedded(services);
      const id = paramOf(ctx, 'paymentId');
      const back = payments.checkoutReturns(id, query(ctx));
      await readFormParams(ctx);
      await payments.completeCheckout(id);
      ctx.status = 303;
      ctx.redirect(back.success);
    }, failed),
  );
}

/** A card setup for an org (signed link): the Save button (GET); its POST saves the test card. */
function setupPages(router: Router<AppState>, services: Services): void {
  router.get(
    '/setup/:orgId',
    pageHandler(async (ctx) => {
      const payments = embedded(services);
      const orgId = paramOf(ctx, 'orgId');
      const sig = query(ctx).get('sig') ?? undefined;
      const { hasCard } = await payments.setupOrg(orgId, sig);
      const action = `${EMBEDDED_PAYMENTS_PATH}/setup/${encodeURIComponent(orgId)}?${ctx.querystring}`;
      render(
        ctx,
        200,
        'Save a card',
        `<p>${hasCard ? 'A card is already saved; saving this one replaces it.' : 'Save a card so paid calls can be billed to it.'}</p>
<form method="post" action="${escapeHtml(action)}">
  ${hidden('csrf', csrfToken(ctx))}
  <label for="card">Card</label>
  <input id="card" name="card" value="${EMBEDDED_TEST_CARD}" readonly>
  <button type="submit">Save card</button>
</form>
<p><a href="/billing/return?status=cancel">Cancel</a></p>
${NOTICE}`,
      );
    }, failed),
  );

  router.post(
    '/setup/:orgId',
    pageHandler(async (ctx) => {
      const payments = embedded(services);
      const orgId = paramOf(ctx, 'orgId');
      await readFormParams(ctx);
      await payments.completeSetup(orgId, query(ctx).get('sig') ?? undefined);
      ctx.status = 303;
      ctx.redirect('/billing/return?status=card_added');
    }, failed),
  );
}

export function embeddedPaymentsPages(services: Services): Router<AppState> {
  const router = new Router<AppState>({ prefix: EMBEDDED_PAYMENTS_PATH });
  checkoutPages(router, services);
  setupPages(router, services);
  return router;
}

/** The documented operations of this file's routes (api/openapi/operations.ts gathers them). */
export const EMBEDDED_PAYMENTS_PAGE_OPERATIONS = [
  pageOperation(
    'get',
    '/embedded-payments/checkout/{paymentId}',
    'getEmbeddedCheckoutPage',
    'Embedded payments: test checkout',
  ),
  pageOperation(
    'post',
    '/embedded-payments/checkout/{paymentId}',
    'postEmbeddedCheckoutPage',
    'Embedded payments: pay',
  ),
  pageOperation(
    'get',
    '/embedded-payments/setup/{orgId}',
    'getEmbeddedSetupPage',
    'Embedded payments: test card setup',
  ),
  pageOperation(
    'post',
    '/embedded-payments/setup/{orgId}',
    'postEmbeddedSetupPage',
    'Embedded payments: save the card',
  ),
];
