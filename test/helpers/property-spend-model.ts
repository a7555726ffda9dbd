/**
 * The model of the ledger and spend governance that test/integration/spend/property-spend.test.ts checks the gateway
 * against: one org (prepaid or card-billed) with a few keys (one a child of the first), its balance, each key's
 * lifetime and per-UTC-day spend, and the holds of reservations nobody settled. `refusal` says what the gateway must
 * answer a paid call (DESIGN.md, Money: per-call max → budgets, the key's then its ancestors' → daily caps, the key's
 * then its ancestors' → funds or the card credit limit), counting held spend as spent; `charge` books a success the
 * way Postgres must: to the key and each ancestor, in all and on the day.
 */

export type Reason =
  | 'per_call_limit_exceeded'
  | 'insufficient_budget'
  | 'daily_cap_exceeded'
  | 'insufficient_credits'
  | 'credit_limit_reached';

export interface KeyCaps {
  budgetCents: number | null;
  dailyCapCents: number | null;
  perCallMaxCents: number | null;
  /** Index of the parent key (its budget and daily cap count this key's spend too), or null for a root key. */
  parent: number | null;
}

export interface Hold {
  key: number;
  day: string;
  priceCents: number;
}

export class SpendModel {
  balanceCents: number;
  readonly spent: number[];
  readonly daySpent = new Map<string, number>();
  holds: Hold[] = [];
  successes = 0;
  failures = 0;

  constructor(
    readonly mode: 'prepaid' | 'card',
    readonly creditLimitCents: number,
    startCents: number,
    readonly keys: readonly KeyCaps[],
  ) {
    this.balanceCents = startCents;
    this.spent = keys.map(() => 0);
  }

  /** The key and each key above it (a child's spend counts against every ancestor's budget and daily cap). */
  chain(key: number): number[] {
    const out = [key];
    for (let k = this.keys[key]!.parent; k !== null; k = this.keys[k]!.parent) out.push(k);
    return out;
  }

  private held(filter: (h: Hold) => boolean): number {
    return this.holds.filter(filter).reduce((sum, h) => sum + h.priceCents, 0);
  }

  dayKey(key: number, day: string): string {
    return `${key}|${day}`;
  }

  /** Why a call of `price` on `key` on `day` must be refused, or null when it must be admitted. */
  refusal(key: number, priceCents: number, day: string): Reason | null {
    if (priceCents === 0) return null;
    const caps = this.keys[key]!;
    if (caps.perCallMaxCents !== null && priceCents > caps.perCallMaxCents) return 'per_call_limit_exceeded';
    for (const k of this.chain(key)) {
      const budget = this.keys[k]!.budgetCents;
      const used = this.spent[k]! + this.held((h) => this.chain(h.key).includes(k));
      if (budget !== null && used + priceCents > budget) return 'insufficient_budget';
    }
    for (const k of this.chain(key)) {
      const cap = this.keys[k]!.dailyCapCents;
      const used =
        (this.daySpent.get(this.dayKey(k, day)) ?? 0) +
        this.held((h) => h.day === day && this.chain(h.key).includes(k));
      if (cap !== null && used + priceCents > cap) return 'daily_cap_exceeded';
    }
    const headroom = this.balanceCents - this.held(() => true);
    if (this.mode === 'card') return headroom + this.creditLimitCents < priceCents ? 'credit_limit_reached' : null;
    return headroom < priceCents ? 'insufficient_credits' : null;
  }

  /** What the call's answer must say it took from credit (`chargeCall` on the balance before it). */
  creditApplied(priceCents: number): number {
    return Math.min(priceCents, Math.max(0, this.balanceCents));
  }

  /** A successful paid (or free) call. */
  charge(key: number, priceCents: number, day: string): void {
    this.successes += 1;
    this.balanceCents -= priceCents;
    for (const k of this.chain(key)) {
      this.spent[k]! += priceCents;
      const dk = this.dayKey(k, day);
      this.daySpent.set(dk, (this.daySpent.get(dk) ?? 0) + priceCents);
    }
  }

  /** The invariants that hold whatever the interleaving: caps and the balance's lower bound. */
  violations(): string[] {
    const out: string[] = [];
    this.keys.forEach((caps, k) => {
      if (caps.budgetCents !== null && this.spent[k]! > caps.budgetCents) {
        out.push(`key ${k} spent ${this.spent[k]} past its budget ${caps.budgetCents}`);
      }
    });
    for (const [dk, cents] of this.daySpent) {
      const cap = this.keys[Number(dk.split('|')[0])]!.dailyCapCents;
      if (cap !== null && cents > cap) out.push(`key-day ${dk} spent ${cents} past its daily cap ${cap}`);
    }
    const floor = this.mode === 'prepaid' ? 0 : -this.creditLimitCents;
    if (this.balanceCents < floor) out.push(`${this.mode} balance ${this.balanceCents} below ${floor}`);
    return out;
  }
}
