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
 * ancestor's), the daily caps (likewise), then the org's funds (prepaid) or credit limit (card).
 */
export function spendRefusal(
  a: AdmitInput,
  o: OrgState,
  k: SpendState,
  d: SpendState,
  ancestors: readonly HeldAncestor[],
): Admission | undefined {
  if (a.perCallMaxCents !== null && a.priceCents > a.perCallMaxCents) return { outcome: 'per_call' };
  if (a.budgetCents !== null && k.sp! + k.res + k.pend + a.priceCents > a.budgetCents) return { outcome: 'budget' };
  for (const x of ancestors) {
    if (x.budgetCents !== null && x.state!.sp! + x.state!.res + x.state!.pend + a.priceCents > x.budgetCents) {
      return { outcome: 'budget', ancestorKeyId: x.keyId };
    }
  }
  if (a.dailyCapCents !== null && d.sp! + d.res + d.pend + a.priceCents > a.dailyCapCents) {
    return { outcome: 'daily_cap' };
  }
  for (const x of ancestors) {
    const cap = x.dailyCapCents ?? null;
    if (cap !== null && x.day!.sp! + x.day!.res + x.day!.pend + a.priceCents > cap) {
      return { outcome: 'daily_cap', ancestorKeyId: x.keyId };
    }
  }
  const headroom = o.bal! - o.res - o.pend;
  if (o.mode === 'card') {
    if (headroom + o.lim < a.priceCents) return { outcome: 'credit_limit' };
  } else if (headroom < a.priceCents) {
    return { outcome: 'funds' };
  }
  return undefined;
}
