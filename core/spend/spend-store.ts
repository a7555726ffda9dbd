/**
 * The gateway's fast money state (DESIGN.md, Money and the hot path): per org the balance as Postgres last reported
 * it (with its version) and the sum of open reservations; per key the committed spend (total and per UTC day) and its
 * open reservations; the idempotency records; the per-key-prefix rate windows; and the open reservations themselves,
 * indexed by expiry for the sweeper.
 *
 * `admit` is one atomic step (one Lua script, one round trip on Redis): idempotent replay → rate limit → spend
 * governance → reservation. It is idempotent per reservation: run twice (a client resending after a reconnect), the
 * second run finds its own reservation and changes nothing. `settle` makes a successful call durable (DESIGN.md and
 * docs/durability.md: the usage stream) and `ackUsage` retires it once Postgres has it. Balances carry Postgres's
 * `balance_version` and are only replaced by newer versions, key spend only grows (merged with max), so values may
 * arrive in any order; spend settled but not yet in Postgres is counted as pending (`pend`) until its ack. State lost
 * from Redis is rebuilt from Postgres (`hydrate`) when `admit` reports it missing.
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
  /** Spent by the key and the keys below it (its child keys), in all. */
  spentCents: number;
  /** Spent by the key and the keys below it on the UTC day of the admission. */
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
  /**
   * The keys above this one (nearest first): a child's spend counts against each ancestor's budget and daily cap
   * too (`dailyCapCents` absent: none).
   */
  ancestors: readonly { keyId: string; budgetCents: number | null; dailyCapCents?: number | null }[];
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
  /**
   * The org's key version the caller's cached key (caps, scopes, revocation) was read under (`keysChanged`), or
   * undefined to skip the check. Any other version answers `stale_key` with the current one: the caller re-reads the
   * key from Postgres and admits again, so a revoked or tightened key is seen at the next call without pub/sub.
   */
  keyVersion?: string;
  /**
   * With an idempotency key: its short hash in the org's set of seen keys (`seenKeyHash`). When the fast state has no
   * record of the key, the admission reports whether Postgres must be asked (Admission `idempotency`).
   */
  seenHash?: string;
  /** This process may answer a first-seen key from the seen set (no unsynced direct bookings pending). */
  fastPath?: boolean;
  /** A spend refusal is the answer even while leases admit on the org (the wait for their recall is over). */
  noRecall?: boolean;
}

/**
 * For an admitted idempotent call with no record in the fast state: `new` = the org's seen set is complete and lacks
 * the key (no Postgres lookup needed); `seen` = the set has its hash (an older call, or a collision: ask Postgres);
 * `unstamped` = the set is not known complete (lost data, never built): ask Postgres and rebuild the set.
 */
export type SeenCheck = 'new' | 'seen' | 'unstamped';

export type Admission =
  | { outcome: 'admitted'; stale: boolean; generation?: number; idempotency?: SeenCheck }
  | { outcome: 'hydrate'; generation?: number }
  | { outcome: 'stale_key'; version: string }
  | { outcome: 'replay'; record: string }
  | { outcome: 'in_flight' }
  | { outcome: 'mismatch' }
  | { outcome: 'rate_limited'; retryAfterMs: number }
  | { outcome: 'suspended' }
  /**
   * The refusals say where the caller stands (issue 31), from the same step that decided them: `spentCents` is what
   * counts against the limit that stopped the call (settled, pending and held by calls in flight; for `per_call`, the
   * key's lifetime spend; for `funds` and `credit_limit`, too), `availableCents` what the org may still spend (balance
   * less holds; for a card-billed org, plus its credit limit). Either may be below what one call costs, or negative for an overdrawn balance.
   */
  | { outcome: 'per_call'; spentCents: number }
  | { outcome: 'budget'; ancestorKeyId?: string; spentCents: number }
  | { outcome: 'daily_cap'; ancestorKeyId?: string; spentCents: number }
  | { outcome: 'funds'; availableCents: number; spentCents: number }
  | { outcome: 'credit_limit'; availableCents: number; spentCents: number }
  /** A spend refusal while other processes hold leases on the org: they are recalled; retry shortly (leases.ts). */
  | { outcome: 'leased' };

/**
 * A lease (core/spend/leases.ts): the admission of many calls at once for one (org, key, UTC day), with the same
 * inputs as AdmitInput's governance. `priceCents` is the price of the call that asks (the slack is judged in its
 * calls); `wantCents` and `wantTokens` what the lease would like to hold.
 */
export interface LeaseInput extends Pick<
  AdmitInput,
  | 'orgId'
  | 'keyId'
  | 'rateKey'
  | 'ratePerMin'
  | 'day'
  | 'priceCents'
  | 'perCallMaxCents'
  | 'budgetCents'
  | 'dailyCapCents'
  | 'ancestors'
  | 'nowMs'
  | 'staleAfterMs'
  | 'keyVersion'
> {
  leaseId: string;
  /** How long the hold outlives the lease's start if nobody returns it (the sweeper then releases it). */
  holdTtlMs: number;
  wantCents: number;
  wantTokens: number;
  /** Under this many calls' worth of slack the answer is `exact` (call by call, as without leases). */
  minCalls: number;
  /**
   * `shared`: the org's lease for its keys without governance of their own (no budget, daily cap, per-call maximum or
   * ancestor): the org's money only, no rate tokens, nothing held on a key. `tokens`: the key's rate tokens only (no
   * money), refused with `hydrate` while the key's spend is not on the fast state. Absent: the key's own lease.
   */
  kind?: 'shared' | 'tokens';
}

export type LeaseGrant =
  | { outcome: 'lease'; cents: number; tokens: number; stale: boolean; generation: number; rateWindow: string }
  | { outcome: 'exact' }
  | { outcome: 'hydrate'; generation?: number }
  | { outcome: 'stale_key'; version: string };

/** What returning a lease needs. */
export interface LeaseRef {
  leaseId: string;
  orgId: string;
  keyId: string;
  day: string;
  ancestorKeyIds: readonly string[];
  /** The rate window the lease's tokens were taken from (the store's own name for it). */
  rateWindow: string;
  /** The org's shared lease (LeaseInput `kind: 'shared'`): it held nothing on a key (`keyId` is ''). */
  shared?: boolean;
}

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

/**
 * The call succeeded upstream. In one atomic step the reservation becomes pending spend (held until Postgres has the
 * call), the call's usage event is appended to the durable usage stream of the org's bucket, and the idempotency
 * record is written. What the charge takes from credit is decided here, from the fast state's balance, so the answer,
 * the replay record and the usage row agree.
 */
export interface SettleInput extends ReservationRef {
  /** The usage event (a serialized CallRecord, without the charge's split, which the step adds). */
  event: string;
  /** What a replay of this idempotency key returns: `head` + credit applied + `middle` + billable + `tail`. */
  record: { head: string; middle: string; tail: string } | null;
  idempotencyTtlMs: number;
  /** The gateway's clock (the in-process store keeps its own expiries by it). */
  nowMs: number;
  /** With a record: the key's short hash, added to the org's seen set in the same step. */
  seenHash?: string;
  /** The call was admitted against this lease (its price leaves the lease's hold), not its own reservation. */
  leaseId?: string;
  /**
   * The lease is its org's shared one: the call held nothing on its key and day, whose pending spend grows by its price
   * all the same (so the key's spend on the fast state stays what it was and is).
   */
  sharedLease?: boolean;
}

/** Where one usage event sits in the durable stream until Postgres has it. */
export interface UsageEntryRef {
  /** The stream (a spend bucket on Redis). */
  stream: string;
  id: string;
}

export type SettleOutcome =
  | { outcome: 'settled'; creditAppliedCents: number; billableCents: number; entry: UsageEntryRef }
  /** The reservation is no longer open (the sweeper voided it, past its expiry): nothing was charged. */
  | { outcome: 'gone' };

/**
 * Calls of one batch (`batchKey`) settled in one atomic step (issue 23, batched settlement): each is decided as
 * `settle` would decide it alone, in order, over a running balance; the settled ones share one stream entry.
 */
export interface SettleBatchOutcome {
  /** The stream entry holding every settled call of the batch, in order (null when none settled). */
  entry: UsageEntryRef | null;
  /** One outcome per input, in input order. */
  results: SettleOutcome[];
}

/** One call of a stream entry: its record (core/spend/call-codec.ts) and the charge's split the settle decided. */
export interface StreamedCall {
  event: string;
  creditAppliedCents: number;
  billableCents: number;
}

/** A stream entry read back (claimed from a consumer that stopped draining it): one or more calls, in order. */
export interface StreamedUsage {
  entry: UsageEntryRef;
  calls: StreamedCall[];
}

/**
 * Postgres has the call: the pending spend it held is released and Postgres's totals after the commit merged in.
 * A stream entry holds every call of a settle batch: the acks of all of an entry's calls go in one `ackUsage` (the
 * entry is acknowledged once, and only that acknowledgement releases what its calls held).
 */
export interface UsageAck {
  entry: UsageEntryRef;
  orgId: string;
  keyId: string;
  ancestorKeyIds: readonly string[];
  day: string;
  /** The pending spend the settle added (the price of a successful paid call; 0 for failed and free calls). */
  pendingCents: number;
  org: { creditCents: number; balanceVersion: number } | null;
  key: { spentCents: number; daySpentCents: number } | null;
  /** Each ancestor's spend after the commit, in `ancestorKeyIds` order (null: unknown). */
  ancestorSpentCents: readonly number[] | null;
  /** Each ancestor's spend on `day` after the commit, in `ancestorKeyIds` order (null or absent: unknown). */
  ancestorDaySpentCents?: readonly number[] | null;
}

export interface HydrateInput {
  orgId: string;
  keyId?: string;
  day?: string;
  org: OrgSnapshot;
  key?: KeySnapshot;
  /** Ancestors' lifetime spend and spend on `day` (with `key`). */
  ancestors?: readonly { keyId: string; spentCents: number; daySpentCents: number }[];
  /**
   * The org's generation when the snapshot was asked for (from the admission). If the org was forgotten since (a
   * suspension, a billing-mode change), the snapshot may predate the change: its flags are not written.
   */
  generation?: number;
  nowMs: number;
}

/**
 * A periodic scan of every shard (1,024 spend buckets on Redis) spread over `of` smaller scans, so no single scan
 * sends a burst of commands that delays the calls in flight (the sweeper and the usage claims).
 */
export interface ScanPart {
  of: number;
}

export interface SpendStore {
  /**
   * Set while the store's backend breaks the money path's requirements (core/spend/redis-requirements.ts, found at a
   * reconnect): paid calls are refused with this reason until a later check passes.
   */
  refusal?: Error | null;
  admit(input: AdmitInput): Promise<Admission>;
  /** The call succeeded: see SettleInput. Idempotent for an open reservation; `gone` once it is not open. */
  settle(input: SettleInput): Promise<SettleOutcome>;
  /**
   * Told, in this process, of every `forgetOrg` and `keysChanged` made through this store (the leases of the org stop
   * admitting at once; other processes see the change at their next lease, within 1 s, or by the announcement).
   */
  onOrgChange?(listener: (orgId: string) => void): void;
  /** A lease (optional: a store without it admits every call with `admit`). */
  lease?(input: LeaseInput): Promise<LeaseGrant>;
  /** A lease's admission window ended: keep `keepCents` held for its calls in flight, release the rest. */
  returnLease?(ref: LeaseRef, keepCents: number, unusedTokens: number): Promise<void>;
  /** Several calls with one `batchKey` settled in one step (see SettleBatchOutcome). */
  settleBatch(inputs: readonly SettleInput[]): Promise<SettleBatchOutcome>;
  /** Calls whose orgs share this key may settle in one batch (on Redis: the org's spend bucket, one Cluster slot). */
  batchKey(orgId: string): string;
  /** The call's owner died, or nothing will be spent: release the reservation and the idempotency claim. True if open. */
  void(ref: ReservationRef): Promise<boolean>;
  /** The call failed: `void`, and the failed call's usage event appended to the stream in the same step. */
  fail(ref: ReservationRef, failedEvent: string): Promise<UsageEntryRef>;
  hydrate(input: HydrateInput): Promise<void>;
  /**
   * Forget an org's snapshot so the next call reads Postgres (suspension, billing mode or balance changed). Bumps the
   * org's generation, so a snapshot read before the change cannot bring the old flags back.
   */
  forgetOrg(orgId: string): Promise<void>;
  /** A key of the org was revoked or changed (caps, scopes): a new key version, so every cached copy is stale. */
  keysChanged(orgId: string): Promise<void>;
  /** Open reservations past their expiry (with `part`, in the next 1/`of` of the store's shards, rotating). */
  expired(nowMs: number, limit: number, part?: ScanPart): Promise<ReservationRef[]>;
  /** The idempotency record (replay or in-flight marker) of a scoped key. */
  idempotencyRecord(idempotencyKey: string): Promise<string | null>;
  /** Usage events delivered to another drainer that has not acknowledged them for `minIdleMs`, now this one's. */
  claimUsage(minIdleMs: number, limit: number, part?: ScanPart): Promise<StreamedUsage[]>;
  /**
   * Postgres has these calls: remove their entries from the stream and release their pending spend (each entry once;
   * every call of an entry in the same `ackUsage`).
   */
  ackUsage(acks: readonly UsageAck[]): Promise<void>;
  /** How many of the org's usage events are not in Postgres yet (the read barrier of the control plane). */
  pendingUsage(orgId: string): Promise<number>;
  /** Add keys' short hashes to their orgs' seen sets (booked in Postgres past a settle, or a rebuild's batch). */
  addSeen(entries: readonly { orgId: string; hash: string }[]): Promise<void>;
  /**
   * A rebuild of the org's seen set starts: the org's seen epoch (created when missing). Read before Postgres is
   * read; lost with the fast state's data, so a rebuild that spans a data loss cannot complete.
   */
  seenEpoch(orgId: string): Promise<string>;
  /** The rebuild read every booked key: stamp the set complete if the epoch is still `epoch`. True if stamped. */
  completeSeen(orgId: string, epoch: string): Promise<boolean>;
}

/** Records stored under an idempotency key: in flight (`p|hash|reservation`) or done (`d|hash|payload`). */
export function pendingRecord(requestHash: string, reservationId: string): string {
  return `p|${requestHash}|${reservationId}`;
}
export function doneRecord(requestHash: string, payload: string): string {
  return `d|${requestHash}|${payload}`;
}
