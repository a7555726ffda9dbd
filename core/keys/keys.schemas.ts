/** Inputs of the key routes and tools. Caps are non-negative integer cents or null (no cap). */
import { z } from 'zod';
import { SCOPES } from '../auth/scopes.js';
import { Cents } from '../money/cents.js';
import { Pagination } from '../pagination.js';

const Cap = Cents.nullable();

export const CreateKeyBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    scopes: z
      .array(z.enum(SCOPES))
      .min(1)
      .max(SCOPES.length)
      .refine((s) => new Set(s).size === s.length, 'must not repeat a scope')
      .optional(),
    budget_cents: Cap.optional(),
    per_call_max_cents: Cap.optional(),
    daily_cap_cents: Cap.optional(),
    approval_mode: z.boolean().optional(),
  })
  .strict();
export type CreateKeyBody = z.infer<typeof CreateKeyBody>;

export const PatchKeyBody = z
  .object({
    budget_cents: Cap.optional(),
    per_call_max_cents: Cap.optional(),
    daily_cap_cents: Cap.optional(),
    approval_mode: z.boolean().optional(),
  })
  .strict()
  .refine(
    (b) => Object.keys(b).length > 0,
    'send at least one of budget_cents, per_call_max_cents, daily_cap_cents, approval_mode',
  );
export type PatchKeyBody = z.infer<typeof PatchKeyBody>;

/** A person approves more spend for an approval-mode key. */
export const ApproveSpendBody = z.object({ amount_cents: z.number().int().min(1).max(10_000_000) }).strict();
export type ApproveSpendBody = z.infer<typeof ApproveSpendBody>;

export const ListKeysQuery = Pagination.extend({
  include_revoked: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
}).strict();
export type ListKeysQuery = z.infer<typeof ListKeysQuery>;

/** Response `data` of the key routes (what KeyAdminService returns; the OpenAPI document shares it). */
export const KeySummaryView = z.object({
  id: z.string(),
  name: z.string(),
  keyPrefix: z.string(),
  scopes: z.array(z.string()),
  source: z.string(),
  parent_key_id: z
    .string()
    .nullable()
    .describe('The key that minted this one (its parent); null for a root key. A child’s spend counts here too.'),
  budget_cents: z
    .number()
    .int()
    .nullable()
    .describe('Lifetime cap on `spent_cents`: this key’s spend and its child keys’ together. Null: none.'),
  per_call_max_cents: z.number().int().nullable().describe('Most one call with this key may cost. Null: none.'),
  daily_cap_cents: z
    .number()
    .int()
    .nullable()
    .describe('Cap per UTC day on `spent_today_cents`: this key’s spend and its child keys’ together. Null: none.'),
  approval_mode: z.boolean(),
  approved_cents: z.number().int(),
  remaining_approval_cents: z.number().int().nullable(),
  spent_cents: z
    .number()
    .int()
    .describe(
      'Spent in all, including child keys: this key’s calls and those of every key it minted (and theirs, down the chain).',
    ),
  spent_today_cents: z
    .number()
    .int()
    .describe(
      'Spent on the current UTC day, including child keys, by the same rule as `spent_cents`: what `daily_cap_cents` counts.',
    ),
  remaining_budget_cents: z
    .number()
    .int()
    .nullable()
    .describe('`budget_cents` less `spent_cents` (never below 0); null without a budget.'),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
export type KeySummaryView = z.infer<typeof KeySummaryView>;
/** POST /v1/keys: the summary plus the plaintext key, shown in this response only. */
export const CreatedKeyView = KeySummaryView.extend({ api_key: z.string() });
export type CreatedKeyView = z.infer<typeof CreatedKeyView>;
/** DELETE /v1/keys/{id}: the revoked key's id and when (the first revocation's time on a repeat). */
export const RevokedKeyView = z.object({ id: z.string(), revoked: z.literal(true), revoked_at: z.string() });
export type RevokedKeyView = z.infer<typeof RevokedKeyView>;
