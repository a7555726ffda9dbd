/**
 * Output schemas of the consumer tools that are not a core view as is (the others import theirs from core/*): the
 * REST routes' `data` shapes, exact at the top level and loose below it (z.looseObject). A REST `data` that is an
 * array is `{ items: [...] }` here (structured content must be an object), beside the route's `meta` fields that
 * carry information (totals, the board's metric).
 */
import { z } from 'zod';
import { SearchItem } from '../../core/catalog/search/search.schemas.js';

const Cents = z.number().int();
const NullableCents = Cents.nullable();
const Stamp = z.string().nullable();

/** One search result: the REST route's item (core/catalog/search/search.schemas.ts), loose at the top level. */
export const SearchItemOut = SearchItem;

export const CompactListingOut = z.object({
  slug: z.string(),
  name: z.string(),
  summary: z.string(),
  category: z.string().nullable(),
  has_free_endpoint: z.boolean(),
  min_price_cents: NullableCents,
  max_price_cents: NullableCents,
  svc_score: z.number(),
  callable: z.boolean(),
});

export const BalanceOut = z.looseObject({
  credit_cents: Cents,
  billing_mode: z.string(),
  auto_reload_enabled: z.boolean(),
  has_payment_method: z.boolean(),
  suspended: z.boolean(),
  billable_cents: Cents,
});

export const KeySummaryOut = z.looseObject({
  id: z.string(),
  name: z.string(),
  keyPrefix: z.string(),
  scopes: z.array(z.string()),
  parent_key_id: z.string().nullable(),
  budget_cents: NullableCents,
  per_call_max_cents: NullableCents,
  daily_cap_cents: NullableCents,
  approval_mode: z.boolean(),
  spent_cents: Cents.describe('Spent in all, including child keys (what budget_cents counts).'),
  spent_today_cents: Cents.describe('Spent this UTC day, including child keys (what daily_cap_cents counts).'),
  remaining_budget_cents: NullableCents,
  created_at: z.string(),
  last_used_at: Stamp,
  revoked_at: Stamp,
});

export const BillingMetaOut = z.looseObject({
  request_id: z.string(),
  cost_cents: Cents,
  price_cents_effective: Cents,
  credit_applied_cents: Cents,
  billable_cents: Cents,
  replayed: z.boolean().optional(),
  original_request_id: z.string().optional(),
});
