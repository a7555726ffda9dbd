/**
 * The money rules (DESIGN.md, Money: each written once and used by every writer). A writer that books a call or
 * moves a balance computes with these functions; the gateway's one-statement group commit, which computes inside
 * Postgres, builds its SQL from the twins below (`*Sql`), and test/integration/spend/money-rules-sql.test.ts checks that
 * each twin agrees with its TypeScript rule over random values.
 *
 * - Fee split: `splitPrice` (core/money/split.ts), re-exported here: the platform fee of a paid call.
 * - Credit applied and billable: `chargeCall`: what a paid call takes from the org's credit and what is left to bill.
 * - Spend counters: `addKeySpend`: a paid call's spend counts against its key and every ancestor of the key.
 * - Auto-reload crossing: `crossesReloadThreshold`: a debit that takes a balance from at or above the threshold to
 *   under it marks the org (core/billing/reload-trigger.ts starts the reload).
 *
 * Writers: core/spend/redis-spend-store.ts and memory-spend-store.ts (the charge's split, decided when a call
 * settles), core/spend/usage-committer.ts (both paths), core/ledger/ledger.service.ts (crossing),
 * core/billing/earnings.service.ts and core/money/split.ts (fee split).
 */
import { luaScript } from '../redis-lua.js';

export { splitPrice, type PriceSplit } from './split.js';

export interface CallCharge {
  /** Debited from the org's balance (less than the price only for a prepaid org short of credit). */
  chargedCents: number;
  /** The part of the price paid from credit. */
  creditAppliedCents: number;
  /** The part of the price not paid from credit: billed to a card-billed org's card, or uncollected. */
  billableCents: number;
}

/**
 * What a paid call of `priceCents` takes from an org whose balance is `balanceCents`. A prepaid balance never goes
 * negative: the call is charged what is left. A card-billed org is charged the full price; what credit covers is
 * applied, the rest is billable.
 */
export function chargeCall(priceCents: number, balanceCents: number, billingMode: 'prepaid' | 'card'): CallCharge {
  const credit = Math.max(0, balanceCents);
  const chargedCents = billingMode === 'prepaid' ? Math.min(priceCents, credit) : priceCents;
  const creditAppliedCents = Math.min(chargedCents, credit);
  return { chargedCents, creditAppliedCents, billableCents: priceCents - creditAppliedCents };
}

/**
 * `chargeCall` in Lua (core/money/lua/charge-call.lua), for the Redis settle script (core/spend/lua/settle.lua includes
 * it): defines `chargeCall(price, balance, mode)` returning credit applied and billable.
 * test/integration/spend/money-rules-sql.test.ts checks it against the TypeScript rule on a real Redis.
 */
export const CHARGE_CALL_LUA = luaScript(import.meta.url, 'lua/charge-call.lua');

/**
 * `chargeCall(price, before, mode).creditAppliedCents` in SQL, for a call charged its full price (the one-statement
 * commit: a prepaid org short of credit fails its CHECK and takes the careful path, which uses `chargeCall`).
 */
export function creditAppliedSql(price: string, before: string): string {
  return `least(${price}, greatest(0, ${before}))`;
}

/** A debit that took the balance from `beforeCents` to `afterCents` crosses the org's auto-reload threshold. */
export function crossesReloadThreshold(
  enabled: boolean,
  thresholdCents: number | null,
  beforeCents: number,
  afterCents: number,
): boolean {
  return enabled && thresholdCents !== null && beforeCents >= thresholdCents && afterCents < thresholdCents;
}

/** `crossesReloadThreshold` in SQL. */
export function crossesReloadThresholdSql(enabled: string, threshold: string, before: string, after: string): string {
  return `(${enabled} and ${threshold} is not null and ${before} >= ${threshold} and ${after} < ${threshold})`;
}

/** Add a paid call's spend to the key's total and to each of its ancestors' (a child spends against its parents). */
export function addKeySpend(
  totals: Map<string, number>,
  keyId: string,
  ancestorKeyIds: readonly string[] | undefined,
  cents: number,
): void {
  totals.set(keyId, (totals.get(keyId) ?? 0) + cents);
  for (const id of ancestorKeyIds ?? []) totals.set(id, (totals.get(id) ?? 0) + cents);
}
