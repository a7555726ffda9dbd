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

/** POST /v1/provider/connect/onboard (connect.service.ts ConnectOnboardView). */
export const ConnectOnboardView = z.object({
  url: z.string(),
  account_id: z.string(),
  status: z.string(),
  expires_at: z.string().nullable(),
  workflow_id: z.string(),
});
export type ConnectOnboardView = z.infer<typeof ConnectOnboardView>;
