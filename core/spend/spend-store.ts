/**
 * The gateway's fast money state (DESIGN.md, Money and the hot path): per org the balance as Postgres last reported
 * it (with its version) and the sum of open reservations; per key the committed spend (total and per UTC day) and its
 * open reservations; the idempotency records; the per-key-prefix rate windows; and the open reservations themselves,
 * indexed by expiry for the sweeper.
 *
 * `admit` is one atomic step (one Lua script, one round trip on Redis): idempotent replay → rate limit → spend
 * governance → reservation. It is idempotent per reservation: run twice (a client resending after a reconnect), the
 * second run finds its own reservation and changes nothing. Postgres stays the source of truth: balances carry Postgres's `balance_version` and are
 * only replaced by newer versions, key spend only grows (merged with max), so values may arrive in any order, and
 * state lost from Redis is rebuilt from Postgres (`hydrate`) when `admit` reports it missing.
 */

export interface OrgSnapshot {
  creditCents: number;
  balanceVersion: number;
  billingMode: 'prepaid' | 'card';
  suspended: boolean;
  /** A card-billed org may owe up to this much (balance down to minus the limit) before paid calls are refused. */
  creditLimitCents: number;
}

export interface KeySnapshot {
  spentCents: number;
  /** Spent on the UTC day of the admission. */
  daySpentCents: number;
}

export interface AdmitInput {
  orgId: string;
  keyId: string;
  /** Rate-limit bucket (the key prefix). */
  rateKey: string;
  ratePerMin: number;
  /** UTC day, `YYYY-MM-DD`. */
  day: string;
  priceCents: number;
  perCallMaxCents: number | null;
  budgetCents: number | null;
  dailyCapCents: number | null;
  /** The keys above this one (nearest first): a child's spend counts against each ancestor's budget too. */
  ancestors: readonly { keyId: string; budgetCents: number | null }[];
  /** Scoped idempotency key (org + key + client key), or null. */
  idempotencyKey: string | null;
  /** Hash of method, path and body: a reused key with another request is refused. */
  requestHash: string;
  reservationId: string;
  nowMs: number;
  /** When the reservation is voided if nobody settles it. */
  reservationTtlMs: number;
  /** A balance older than this is refreshed from Postgres (off the request path). */
  staleAfterMs: number;
}

export type Admission =
  | { outcome: 'admitted'; stale: boolean; generation?: number }
  | { outcome: 'hydrate'; generation?: number }
  | { outcome: 'replay'; record: string }
  | { outcome: 'in_flight' }
  | { outcome: 'mismatch' }
  | { outcome: 'rate_limited'; retryAfterMs: number }
  | { outcome: 'suspended' }
  | { outcome: 'per_call' }
  | { outcome: 'budget'; ancestorKeyId?: string }
  | { outcome: 'daily_cap' }
  | { outcome: 'funds' }
  | { outcome: 'credit_limit' };

export interface ReservationRef {
  orgId: string;
  keyId: string;
  /** The key's ancestors, whose spend the reservation also holds (nearest first; empty for a root key). */
  ancestorKeyIds: readonly string[];
  day: string;
  priceCents: number;
  reservationId: string;
  idempotencyKey: string | null;
}

export interface SettleInput extends ReservationRef {
  /** Postgres's values after the commit. */
  org: { creditCents: number; balanceVersion: number } | null;
  key: { spentCents: number; daySpentCents: number } | null;
  /** Postgres's spend of each ancestor after the commit, in `ancestorKeyIds` order (null: unknown). */
  ancestorSpentCents: readonly number[] | null;
  /** What a replay of this idempotency key returns. */
  record: string | null;
  idempotencyTtlMs: number;
  /** The gateway's clock (the in-process store keeps its own expiries by it). */
  nowMs: number;
}

export interface HydrateInput {
  orgId: string;
  keyId?: string;
  day?: string;
  org: OrgSnapshot;
  key?: KeySnapshot;
  /** Ancestors' lifetime spend (with `key`). */
  ancestors?: readonly { keyId: string; spentCents: number }[];
  /**
   * The org's generation when the snapshot was asked for (from the admission). If the org was forgotten since (a
   * suspension, a billing-mode change), the snapshot may predate the change: its flags are not written.
   */
  generation?: number;
  nowMs: number;
}

export interface SpendStore {
  admit(input: AdmitInput): Promise<Admission>;
  /** The call committed: release the reservation into spend and record the replay. */
  settle(input: SettleInput): Promise<void>;
  /** Several settles in one step (the calls of one committed batch). */
  settleMany(inputs: readonly SettleInput[]): Promise<void>;
  /** The call failed (or its owner died): release the reservation and the idempotency claim. True if it was open. */
  void(ref: ReservationRef): Promise<boolean>;
  hydrate(input: HydrateInput): Promise<void>;
  /**
   * Forget an org's snapshot so the next call reads Postgres (suspension, billing mode or balance changed). Bumps the
   * org's generation, so a snapshot read before the change cannot bring the old flags back.
   */
  forgetOrg(orgId: string): Promise<void>;
  /** Open reservations past their expiry. */
  expired(nowMs: number, limit: number): Promise<ReservationRef[]>;
  /** The idempotency record (replay or in-flight marker) of a scoped key. */
  idempotencyRecord(idempotencyKey: string): Promise<string | null>;
}

/** Records stored under an idempotency key: in flight (`p|hash|reservation`) or done (`d|hash|payload`). */
export function pendingRecord(requestHash: string, reservationId: string): string {
  return `p|${requestHash}|${reservationId}`;
}
export function doneRecord(requestHash: string, payload: string): string {
  return `d|${requestHash}|${payload}`;
}
