/**
 * The second phase of a gateway call's two-phase transfer (DESIGN.md, Money): a `Reservation` is what an admission
 * (core/spend/admission.ts) holds for one call, and the only way to end it.
 *
 * - `commit(call, price)`: the call succeeded upstream. Its usage row and ledger debit go to Postgres in the group
 *   commit (core/spend/usage-committer.ts); an ambiguous commit is fenced, so the caller is never told 503 for a call
 *   that was charged and a reservation is never voided for spend that happened. Then the fast state is settled (off
 *   the request path, batched per turn of the event loop) and the replay record written. A commit that finds an
 *   earlier call booked under the same Idempotency-Key (the fast state had forgotten it) is answered as its replay.
 * - `void(failed)`: the call failed. The hold is released (the refund) and the call recorded as failed, unbilled.
 *
 * A reservation the gateway never ends (a crash) is released by the sweeper (gateway/sweeper.ts) by the same rule.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../clock.js';
import { ServiceUnavailableError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { EffectivePrice } from '../pricing/effective-price.js';
import { findIdempotencyRecord } from './idempotency-records.js';
import { doneRecord, type ReservationRef, type SettleInput, type SpendStore } from './spend-store.js';
import type { CallRecord, CommittedCall, UsageCommitter } from './usage-committer.js';
import { idempotencyMismatch } from '../admission/refusals.js';

/** Idempotency records outlive the 24 hours the contract promises. */
export const IDEMPOTENCY_TTL_MS = 25 * 3_600_000;

/** The billing `meta` of a call's envelope. */
export interface BillingMeta {
  request_id: string;
  cost_cents: number;
  price_cents_effective: number;
  credit_applied_cents: number;
  billable_cents: number;
  price_increase?: { price_cents: number; effective_at: string };
  discount?: Record<string, unknown>;
}

/** How a call ended: committed with its billing meta, or answered as the replay of an earlier call. */
export type Settled = { kind: 'committed'; meta: BillingMeta } | { kind: 'replay'; record: string };

/** What a reservation needs from the process's money path (implemented by `Admissions`). */
export interface SettlementContext {
  readonly spend: SpendStore;
  readonly committer: UsageCommitter;
  readonly orm: MikroORM;
  readonly clock: Clock;
  readonly log: Logger;
  /** Keep a done record in process (immutable once written). */
  remember(scopedKey: string, record: string, nowMs: number): void;
  /** Settle the fast state on the next turn of the event loop, with the other calls of the batch. */
  queueSettle(settle: SettleInput): void;
}

export class Reservation implements ReservationRef {
  constructor(
    private readonly ctx: SettlementContext,
    /** `degraded`: a free call made while the fast state is down; nothing is held, only Postgres is written. */
    readonly kind: 'admitted' | 'degraded',
    readonly orgId: string,
    readonly keyId: string,
    readonly ancestorKeyIds: readonly string[],
    readonly day: string,
    readonly priceCents: number,
    readonly reservationId: string,
    /** Scoped (org + key + client key), as the fast state knows it. */
    readonly idempotencyKey: string | null,
    /** The client's own Idempotency-Key, as Postgres knows it. */
    readonly clientKey: string | null,
    readonly requestHash: string,
    readonly nowMs: number,
  ) {}

  /** The call succeeded upstream: book it (see the file header). Throws 503 when it could not be recorded. */
  async commit(call: CallRecord, price: EffectivePrice): Promise<Settled> {
    let committed: CommittedCall;
    try {
      committed = await this.ctx.committer.commit(call);
    } catch (err) {
      committed = await this.fence(call, err);
    }
    if (committed.duplicate) return this.duplicate();
    const meta: BillingMeta = {
      request_id: call.requestId,
      cost_cents: this.priceCents,
      price_cents_effective: this.priceCents,
      credit_applied_cents: committed.creditAppliedCents,
      billable_cents: committed.billableCents,
    };
    if (price.price_increase) meta.price_increase = price.price_increase;
    if (price.discount) meta.discount = { ...price.discount };
    const record = this.idempotencyKey === null ? null : doneRecord(this.requestHash, JSON.stringify(meta));
    if (record !== null) this.ctx.remember(this.idempotencyKey!, record, this.nowMs);
    if (this.kind === 'admitted') {
      // Not awaited: the call is durable, and until the settle lands the reservation keeps holding exactly what the
      // settle moves into spend, so admissions in between see the same headroom. A duplicate of an idempotent call
      // sees the claim in flight for that moment and waits for the record. A lost settle is the sweeper's job.
      this.ctx.queueSettle({
        orgId: this.orgId,
        keyId: this.keyId,
        ancestorKeyIds: this.ancestorKeyIds,
        day: this.day,
        priceCents: this.priceCents,
        reservationId: this.reservationId,
        idempotencyKey: this.idempotencyKey,
        org: committed.org,
        key: committed.key,
        ancestorSpentCents: committed.ancestorSpentCents,
        record,
        idempotencyTtlMs: IDEMPOTENCY_TTL_MS,
        nowMs: this.ctx.clock.now().getTime(),
      });
    }
    return { kind: 'committed', meta };
  }

  /** The call failed: release the hold (the refund), then record the call as failed and unbilled (not awaited). */
  async void(failed: CallRecord): Promise<void> {
    if (this.kind === 'admitted') {
      await this.ctx.spend.void(this).catch((e: unknown) => this.ctx.log.warn({ err: e }, 'void failed'));
    }
    this.ctx.committer.commit(failed).catch((e: unknown) => this.ctx.log.warn({ err: e }, 'failed call not recorded'));
  }

  /** Release the hold without recording anything (nothing will be spent); never throws. */
  release(): Promise<unknown> {
    if (this.kind !== 'admitted') return Promise.resolve();
    return this.ctx.spend.void(this).catch(() => undefined);
  }

  /**
   * The commit's outcome is unknown (an error, a lost answer): fence it, so exactly one of "the call committed" and
   * "the call is recorded as failed" can become true. If Postgres cannot even answer the fence, the reservation is
   * left to the sweeper (which settles or voids it by the same rule) and the answer is 503.
   */
  private async fence(call: CallRecord, err: unknown): Promise<CommittedCall> {
    let fenced;
    try {
      fenced = await this.ctx.committer.fence(call);
    } catch (fenceErr) {
      this.ctx.log.error({ err: fenceErr, usage_id: call.usageId }, 'commit outcome unknown; left to the sweeper');
      throw new ServiceUnavailableError('The call could not be recorded. Retry later with the same Idempotency-Key.', {
        cause: err,
      });
    }
    if (fenced.committed) return fenced.call;
    await this.release();
    throw new ServiceUnavailableError('The call could not be recorded; it was not charged. Retry later.', {
      cause: err,
    });
  }

  /** An earlier call with this key is already booked (the fast state had forgotten it): answer as its replay. */
  private async duplicate(): Promise<Settled> {
    await this.release();
    const stored = await findIdempotencyRecord(this.ctx.orm, this.orgId, this.keyId, this.clientKey!);
    if (stored === null) throw new ServiceUnavailableError('The call could not be recorded; retry later.');
    if (!stored.startsWith(this.requestHash, 2)) throw idempotencyMismatch();
    return { kind: 'replay', record: stored };
  }
}

/** What a replay reports beyond the usage row: a scheduled increase or an active discount at the time of the call. */
export function replayExtra(price: EffectivePrice): Record<string, unknown> | null {
  if (!price.price_increase && !price.discount) return null;
  const extra: Record<string, unknown> = {};
  if (price.price_increase) extra.price_increase = price.price_increase;
  if (price.discount) extra.discount = { ...price.discount };
  return extra;
}

/** The billing meta a replay answers: the original call's, marked replayed, under this request's id. */
export function replayMeta(record: string, requestHash: string, requestId: string): Record<string, unknown> {
  const original = JSON.parse(record.slice(3 + requestHash.length)) as BillingMeta;
  return { ...original, request_id: requestId, replayed: true, original_request_id: original.request_id };
}
