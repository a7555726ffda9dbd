/** Inputs of the billing routes and tools. */
import { z } from 'zod';

export const PACKS = [
  { name: 'starter', price_cents: 500, credit_cents: 500 },
  { name: 'builder', price_cents: 2_000, credit_cents: 2_100 },
  { name: 'scale', price_cents: 10_000, credit_cents: 11_000 },
] as const;
export type PackName = (typeof PACKS)[number]['name'];

export const CHECKOUT_MIN_CENTS = 500;
export const CHECKOUT_MAX_CENTS = 100_000;

const ReturnUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2000);

export const CheckoutBody = z
  .object({
    pack: z.enum(PACKS.map((p) => p.name) as [PackName, ...PackName[]]).optional(),
    amount_cents: z.number().int().min(CHECKOUT_MIN_CENTS).max(CHECKOUT_MAX_CENTS).optional(),
    success_url: ReturnUrl.optional(),
    cancel_url: ReturnUrl.optional(),
  })
  .strict()
  .refine((b) => (b.pack === undefined) !== (b.amount_cents === undefined), 'give exactly one of pack or amount_cents');
export type CheckoutBody = z.infer<typeof CheckoutBody>;

export const AutoReloadBody = z
  .object({
    enabled: z.boolean(),
    threshold_cents: z.number().int().min(0).max(CHECKOUT_MAX_CENTS).optional(),
    amount_cents: z.number().int().min(CHECKOUT_MIN_CENTS).max(CHECKOUT_MAX_CENTS).optional(),
  })
  .strict()
  .refine((b) => !b.enabled || (b.threshold_cents !== undefined && b.amount_cents !== undefined), {
    message: 'threshold_cents and amount_cents are required to enable auto-reload',
  });
export type AutoReloadBody = z.infer<typeof AutoReloadBody>;

/** Response `data` of GET /v1/billing/balance (billing.service.ts balanceView; the OpenAPI document shares it). */
export const BalanceView = z.object({
  credit_cents: z.number().int(),
  billing_mode: z.string(),
  auto_reload_enabled: z.boolean(),
  has_payment_method: z.boolean(),
  suspended: z.boolean(),
  billable_cents: z.number().int(),
});
export type BalanceView = z.infer<typeof BalanceView>;

/** GET /v1/billing/packs: the packs with their currency. */
export const PackView = z.object({
  name: z.string(),
  price_cents: z.number().int(),
  credit_cents: z.number().int(),
  currency: z.literal('usd'),
});
export type PackView = z.infer<typeof PackView>;

/** POST /v1/provider/connect/onboard (connect.service.ts ConnectOnboardView). */
export const ConnectOnboardView = z.object({
  url: z.string(),
  account_id: z.string(),
  status: z.string(),
  expires_at: z.string().nullable(),
  workflow_id: z.string(),
});
export type ConnectOnboardView = z.infer<typeof ConnectOnboardView>;

/** The balance with what the console also shows: auto-reload settings and why the org is suspended. */
export const AccountView = BalanceView.extend({
  auto_reload_threshold_cents: z.number().int().nullable(),
  auto_reload_amount_cents: z.number().int().nullable(),
  suspended_reason: z.string().nullable(),
});
export type AccountView = z.infer<typeof AccountView>;

/** When a hosted page of the payment processor stops working; null if it did not say. */
const PageExpiry = z.string().nullable();

/** POST /v1/billing/checkout: the hosted checkout page a person pays on, and what it buys. */
export const CheckoutView = z.object({
  checkout_url: z.string().nullable().describe('The payment page; null only if the processor returned none.'),
  checkout_session_id: z.string(),
  amount_cents: z.number().int(),
  credit_cents: z.number().int(),
  expires_at: PageExpiry,
});
export type CheckoutView = z.infer<typeof CheckoutView>;

/** POST /v1/billing/setup-intent: the card-setup page a person opens, and the SetupIntent it confirms. */
export const SetupIntentView = z.object({
  setup_intent_id: z.string(),
  client_secret: z.string().nullable(),
  url: z.string().nullable().describe('The card-setup page a person opens; null only if the processor returned none.'),
  checkout_session_id: z.string(),
  expires_at: PageExpiry,
});
export type SetupIntentView = z.infer<typeof SetupIntentView>;

/** POST /v1/billing/portal: the billing portal a person opens (cards, invoices, receipts). */
export const PortalView = z.object({ url: z.string() });
export type PortalView = z.infer<typeof PortalView>;

/** POST /v1/billing/auto-reload: the settings now in force. */
export const AutoReloadView = z.object({
  auto_reload_enabled: z.boolean(),
  threshold_cents: z.number().int().nullable(),
  amount_cents: z.number().int().nullable(),
});
export type AutoReloadView = z.infer<typeof AutoReloadView>;

/** POST /v1/webhooks/stripe (webhooks.service.ts): the event's id and what was done with it. */
export const WebhookResult = z.object({
  received: z.literal(true),
  duplicate: z.boolean().describe('Delivered before: nothing was done again.'),
  event_id: z.string(),
  outcome: z.string().describe('What was done, in words (e.g. "credited 500", "ignored").'),
});
export type WebhookResult = z.infer<typeof WebhookResult>;
