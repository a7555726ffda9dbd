/**
 * MemorySpendStore's state records and its admission's spend checks (core/spend/memory-spend-store.ts), the same
 * checks and order as the ADMIT script (core/spend/lua/admit.lua).
 */
import type { Admission, AdmitInput } from './spend-store.js';

export interface OrgState {
  bal?: number;
  ver: number;
  mode?: 'prepaid' | 'card';
  susp: boolean;
  res: number;
  /** Settled, not yet in Postgres. */
  pend: number;
  /** Usage events not yet in Postgres. */
  pn: number;
  t: number;
  lim: number;
  gen: number;
}

export interface SpendState {
  sp?: number;
  res: number;
  pend: number;
}

/** An ancestor of the calling key with its spend state and its day's (both hydrated for a paid call). */
export type HeldAncestor = AdmitInput['ancestors'][number] & { state?: SpendState; day?: SpendState };

/** What an idempotency record already there answers: another request (mismatch), a call in flight, or a replay. */
export function recordAnswer(rec: string, a: AdmitInput): Admission {
  if (rec.slice(2, 2 + a.requestHash.length) !== a.requestHash) return { outcome: 'mismatch' };
  if (rec.startsWith('p')) {
    return rec.endsWith(`|${a.reservationId}`) ? { outcome: 'admitted', stale: false } : { outcome: 'in_flight' };
  }
  return { outcome: 'replay', record: rec };
}

/**
 * Why a paid call may not spend, or undefined: the key's per-call maximum, the budgets (the key's, then each
 * ancestor's), the daily caps (likewise), then the org's funds (prepaid) or credit limit (card). Each refusal carries
 * the figure the ADMIT script replies with (spend against the limit, or what is available).
 */
export function spendRefusal(
  a: AdmitInput,
  o: OrgState,
  k: SpendState,
  d: SpendState,
  ancestors: readonly HeldAncestor[],
): Admission | undefined {
  const spent = (s: SpendState) => s.sp! + s.res + s.pend;
  if (a.perCallMaxCents !== null && a.priceCents > a.perCallMaxCents)
    return { outcome: 'per_call', spentCents: spent(k) };
  if (a.budgetCents !== null && spent(k) + a.priceCents > a.budgetCents) {
    return { outcome: 'budget', spentCents: spent(k) };
  }
  for (const x of ancestors) {
    if (x.budgetCents !== null && spent(x.state!) + a.priceCents > x.budgetCents) {
      return { outcome: 'budget', ancestorKeyId: x.keyId, spentCents: spent(x.state!) };
    }
  }
  if (a.dailyCapCents !== null && spent(d) + a.priceCents > a.dailyCapCents) {
    return { outcome: 'daily_cap', spentCents: spent(d) };
  }
  for (const x of ancestors) {
    const cap = x.dailyCapCents ?? null;
    if (cap !== null && spent(x.day!) + a.priceCents > cap) {
      return { outcome: 'daily_cap', ancestorKeyId: x.keyId, spentCents: spent(x.day!) };
    }
  }
  const headroom = o.bal! - o.res - o.pend;
  if (o.mode === 'card') {
    if (headroom + o.lim < a.priceCents)
      return { outcome: 'credit_limit', availableCents: headroom + o.lim, spentCents: spent(k) };
  } else if (headroom < a.priceCents) {
    return { outcome: 'funds', availableCents: headroom, spentCents: spent(k) };
  }
  return undefined;
}
