/**
 * Billing tools: get_balance, and the three steps a person finishes in a browser, which
 * need `billing:write` like their REST routes: create_checkout (POST /v1/billing/checkout: a hosted checkout URL),
 * billing_setup (POST /v1/billing/setup-intent: the hosted card-setup page's URL and its SetupIntent) and
 * billing_portal (POST /v1/billing/portal: the customer portal URL). The tool hands the URL to the agent, which
 * gives it to its person; nothing is charged until that person completes the page.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { requireScope, type Principal } from '../../core/auth/scopes.js';
import {
  CHECKOUT_MAX_CENTS,
  CHECKOUT_MIN_CENTS,
  CheckoutBody,
  CheckoutView,
  PACKS,
  PortalView,
  SetupIntentView,
} from '../../core/billing/billing.schemas.js';
import { AppError } from '../../core/errors.js';
import type { Services } from '../../platform/services.js';
import type { ToolContext } from '../tool-context.js';
import { BalanceOut } from './consumer-schemas.js';
import { checkArgs, parseArgs, runTool } from './tool-result.js';
import { dataOrError } from './tool-schemas.js';
import { moneyMeta } from '../tool-listing.js';
import { withPersonSteps } from '../elicitation.js';
import { cardSetupSteps, checkoutSteps } from '../person-steps.js';

/** Creates a Stripe session each call (a URL for a person); our books change only when the person completes it. */
const PERSON_STEP = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
} as const;

/**
 * `billing:write`, with how to get it: the spec's 403 `forbidden` naming the scope, plus the step that adds it (a
 * verified email elevates the key in place; docs/decisions.md "Agent-first elevation").
 */
function needBillingWrite(principal: Principal, publicBase: string): void {
  try {
    requireScope(principal, 'billing:write');
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    throw new AppError(err.kind, err.message, {
      details: {
        ...err.details,
        how_to_get_scope:
          `Verify an email for this key: POST ${publicBase}/v1/me/email {"email": ...} with the key, then a person ` +
          'opens the link mailed to them; billing:write is then added to the same key.',
      },
    });
  }
}

/** The packs with their prices, e.g. "starter $5 = 500 credits". */
const PACK_PRICES = PACKS.map((p) => `${p.name} $${p.price_cents / 100} = ${p.credit_cents} credits`).join(', ');

/** The tool definitions (built once per process: a 2026-07-28 request builds its server per request). */
const DEFS = {
  get_balance: {
    title: 'Balance',
    description: "Your org's credit in cents, billing mode, card on file, suspension and card usage owed.",
    inputSchema: z.object({}).strict(),
    outputSchema: dataOrError(BalanceOut),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  create_checkout: {
    title: 'Buy credits',
    description:
      `Buy credits: returns \`checkout_url\`, where a person pays (MOVES MONEY) ${PACK_PRICES} or ` +
      `\`amount_cents\`.`,
    inputSchema: z
      .object({
        pack: z.enum(PACKS.map((p) => p.name) as [string, ...string[]]).optional(),
        amount_cents: z
          .number()
          .int()
          .min(CHECKOUT_MIN_CENTS)
          .max(CHECKOUT_MAX_CENTS)
          .optional()
          .describe('Cents; credits = cents.'),
      })
      .strict(),
    outputSchema: dataOrError(CheckoutView),
    annotations: PERSON_STEP,
    _meta: moneyMeta(`${PACK_PRICES}, or amount_cents ${CHECKOUT_MIN_CENTS}-${CHECKOUT_MAX_CENTS} (credits = cents)`),
  },
  billing_setup: {
    title: 'Add a card',
    description: 'Returns `url`, where a person saves a card (free). MOVES MONEY: paid calls then bill that card.',
    inputSchema: z.object({}).strict(),
    outputSchema: dataOrError(SetupIntentView),
    annotations: PERSON_STEP,
    _meta: moneyMeta('free; then paid calls bill the card at their quoted price'),
  },
  billing_portal: {
    title: 'Billing portal',
    description:
      `Returns \`url\`, where a person manages cards and sees invoices (free). MOVES MONEY: that card pays ` +
      `card-billed calls.`,
    inputSchema: z.object({}).strict(),
    outputSchema: dataOrError(PortalView),
    annotations: PERSON_STEP,
    _meta: moneyMeta('free; the card set there pays card-billed calls'),
  },
};

export function registerBillingTools(server: McpServer, services: Services, ctx: ToolContext): void {
  const publicBase = services.config.urls.publicBase;

  server.registerTool('get_balance', DEFS.get_balance, () =>
    runTool(ctx.log, async () => ({ ...(await services.billing.balance(ctx.principal)) })),
  );

  // The checkout page becomes a URL elicitation when the client can show one (mcp/elicitation.ts).
  server.registerTool(
    'create_checkout',
    DEFS.create_checkout,
    withPersonSteps(server, 'create_checkout', services, ctx, checkoutSteps(services, ctx), (args) =>
      runTool(ctx.log, async () => {
        checkArgs(args);
        needBillingWrite(ctx.principal, publicBase);
        return { ...(await services.billing.checkout(ctx.principal, parseArgs(CheckoutBody, args))) };
      }),
    ),
  );

  // The card page too (a URL elicitation when the client can show one; done once a new card is saved).
  const cardSetup = cardSetupSteps(services, ctx);
  server.registerTool(
    'billing_setup',
    DEFS.billing_setup,
    withPersonSteps(
      server,
      'billing_setup',
      services,
      ctx,
      cardSetup.source,
      cardSetup.run(() =>
        runTool(ctx.log, async () => {
          needBillingWrite(ctx.principal, publicBase);
          return { ...(await services.billing.setupIntent(ctx.principal)) };
        }),
      ),
    ),
  );

  server.registerTool('billing_portal', DEFS.billing_portal, () =>
    runTool(ctx.log, async () => {
      needBillingWrite(ctx.principal, publicBase);
      return { ...(await services.billing.portal(ctx.principal)) };
    }),
  );
}
