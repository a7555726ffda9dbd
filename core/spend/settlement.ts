/**
 * The second phase of a gateway call's two-phase transfer (DESIGN.md, Money; docs/durability.md): a `Reservation` is
 * what an admission (core/spend/admission.ts) holds for one call, and the only way to end it.
 *
 * - `commit(call, price)`: the call succeeded upstream. One atomic step on the fast state moves the hold into pending
 *   spend, decides the charge's split, appends the usage event to the durable usage stream and writes the replay
 *   record (SpendStore.settle, batched with the calls ending alongside it: core/spend/settle-batcher.ts); the answer
 *   is sent after it. The usage drain (core/spend/usage-drain.ts) then books
 *   the call in Postgres (usage row, ledger debit, earning) within milliseconds. A reservation the sweeper already
 *   voided (the call outlived it) cannot settle: the caller is told 503 and nothing is charged. A settle whose outcome
 *   is unknown (its reply lost) books the call in Postgres directly before answering.
 * - `void(failed)`: the call failed. The hold is released (the refund) and the failed call appended to the stream in
 *   the same step, unbilled.
 * - A free call made while the fast state is down (`degraded`) is booked in Postgres directly before its answer.
 *
 * A reservation the gateway never ends (a crash) is released by the sweeper (core/spend/sweeper.ts).
 */
import type { Clock } from '../clock.js';
import { ServiceUnavailableError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { EffectivePrice } from '../pricing/effective-price.js';
import { encodeCall } from './call-codec.js';
import { seenKeyHash, type SeenKeys } from './idempotency-seen.js';
import type { Lease, LeaseBook } from './leases.js';
import type { SettleBatcher } from './settle-batcher.js';
import type { ReservationRef, SettleInput, SpendStore } from './spend-store.js';
import type { UsageDrain } from './usage-drain.js';
import type { CallRecord, UsageCommitter } from './usage-committer.js';

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
  /** Successful calls settle through it, in batches (it hands them to the drain). */
  readonly settler: Pick<SettleBatcher, 'settle'>;
  readonly committer: UsageCommitter;
  readonly drain: UsageDrain;
  readonly clock: Clock;
  readonly log: Logger;
  /** The seen sets' process side: a call booked in Postgres past the settle is added before its answer. */
  readonly seen?: Pick<SeenKeys, 'booked'>;
  /** Keep a done record in process (immutable once written). */
  remember(scopedKey: string, record: string, nowMs: number): void;
  /** The reservation ended, however (for the operators' count of open reservations). */
  ended?(reservationId: string): void;
}

export class Reservation implements ReservationRef {
  constructor(
    private readonly ctx: SettlementContext,
    /**
     * `admitted`: the call's own reservation; `leased`: admitted in process against a lease (core/spend/leases.ts);
     * `degraded`: a free call made while the fast state is down; nothing is held, only Postgres is written.
     */
    readonly kind: 'admitted' | 'degraded' | 'leased',
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
    /** With kind `leased`: the lease and its book. */
    private leased?: { lease: Lease; book: LeaseBook },
  ) {}

  /** The call succeeded upstream: make it durable (see the file header). Throws 503 when it could not be. */
  commit(call: CallRecord, price: EffectivePrice): Promise<Settled> {
    return this.commitOnce(call, price).finally(() => this.ctx.ended?.(this.reservationId));
  }

  private async commitOnce(call: CallRecord, price: EffectivePrice): Promise<Settled> {
    if (this.kind === 'degraded') return this.commitInPostgres(call, price);
    const record =
      this.idempotencyKey === null ? null : replayRecordParts(this.requestHash, call.requestId, this.priceCents, price);
    const input: SettleInput = {
      orgId: this.orgId,
      keyId: this.keyId,
      ancestorKeyIds: this.ancestorKeyIds,
      day: this.day,
      priceCents: this.priceCents,
      reservationId: this.reservationId,
      idempotencyKey: this.idempotencyKey,
      event: encodeCall(call),
      record,
      idempotencyTtlMs: IDEMPOTENCY_TTL_MS,
      nowMs: this.ctx.clock.now().getTime(),
      seenHash: this.clientKey === null ? undefined : seenKeyHash(this.keyId, this.clientKey),
    };
    if (this.leased) {
      input.leaseId = this.leased.lease.ref.leaseId;
      if (this.leased.lease.ref.shared) input.sharedLease = true;
    }
    let settled;
    try {
      settled = await this.ctx.settler.settle(input, call);
    } catch (err) {
      // The step may or may not have run (its answer was lost, or the fast state failed): book the call in Postgres.
      this.ctx.log.error({ err, usage_id: call.usageId }, 'settle outcome unknown: booking the call in Postgres');
      if (this.leased) this.leased.book.poison(this.leased.lease);
      this.endLeased(true);
      return this.commitAfterUnknownSettle(call, price, err);
    }
    this.endLeased(settled.outcome === 'settled');
    if (settled.outcome === 'gone') {
      throw new ServiceUnavailableError('The call outlived its reservation and was not charged; retry it.');
    }
    const { creditAppliedCents, billableCents } = settled;
    if (record !== null) {
      const full = `${record.head}${creditAppliedCents}${record.middle}${billableCents}${record.tail}`;
      this.ctx.remember(this.idempotencyKey!, full, this.nowMs);
    }
    return {
      kind: 'committed',
      meta: billingMeta(call.requestId, this.priceCents, creditAppliedCents, billableCents, price),
    };
  }

  /**
   * The settle's outcome is unknown. The call succeeded upstream, so it is booked in Postgres directly, and answered
   * 200 once it is: the booking is idempotent on the usage id, so if the settle did run, the drain's later booking of
   * its stream entry is a duplicate (charged once, its pending spend released by the acknowledgement); if it did not,
   * the hold is released here (or by the sweeper at its expiry when the fast state is still failing). The org is then
   * re-read from Postgres by the next admission (balance, key and day spend max-merged), so no budget or daily cap is
   * overshot. Only when Postgres cannot book the call either is the answer 503: the call was then charged only if the
   * settle ran, and a retry with the same Idempotency-Key replays it if so.
   */
  private async commitAfterUnknownSettle(call: CallRecord, price: EffectivePrice, cause: unknown): Promise<Settled> {
    let booked;
    try {
      booked = await this.ctx.committer.commit(this.unsynced(call));
    } catch (err) {
      this.ctx.log.error({ err, usage_id: call.usageId }, 'call not booked after an unknown settle outcome');
      throw new ServiceUnavailableError(
        'The call could not be recorded. Retry with the same Idempotency-Key: if it was charged, the retry replays it.',
        { cause },
      );
    }
    if (booked.duplicate) {
      // Another call under the same Idempotency-Key was booked first: this one is not charged; the retry replays it.
      throw new ServiceUnavailableError(
        'The call could not be recorded; it was not charged. Retry with the same Idempotency-Key to get the answer.',
        { cause },
      );
    }
    if (this.kind === 'admitted') await this.ctx.spend.void(this).catch(() => undefined);
    await this.ctx.spend.forgetOrg(this.orgId).catch(() => undefined);
    await this.bookedPastSettle();
    return {
      kind: 'committed',
      meta: billingMeta(call.requestId, this.priceCents, booked.creditAppliedCents, booked.billableCents, price),
    };
  }

  /**
   * A successful idempotent call booked in Postgres past the settle is listed in `idempotency_unsynced` by its own
   * booking statement (core/spend/idempotency-seen.ts): the org's seen set may lack it until it is synced.
   */
  private unsynced(call: CallRecord): CallRecord {
    return this.clientKey === null || call.outcome !== 'success' ? call : { ...call, unsynced: true };
  }

  /** Before answering such a call: its key in the seen set, or every process's fast path waited out. */
  private async bookedPastSettle(): Promise<void> {
    if (this.clientKey !== null) await this.ctx.seen?.booked(this.orgId, this.keyId, this.clientKey);
  }

  /** The call failed: release the hold (the refund) and record the call as failed and unbilled. */
  void(failed: CallRecord): Promise<void> {
    return this.voidOnce(failed).finally(() => this.ctx.ended?.(this.reservationId));
  }

  /** A leased call ended (once): the lease learns whether its price was spent. */
  private endLeased(charged: boolean): void {
    const leased = this.leased;
    if (!leased) return;
    this.leased = undefined;
    leased.book.ended(leased.lease, this.priceCents, charged);
  }

  private async voidOnce(failed: CallRecord): Promise<void> {
    if (this.kind === 'leased') {
      // Nothing of the call's own to release: the price is the lease's again; the failed call goes to the stream.
      this.endLeased(false);
      try {
        await this.ctx.settler.settle(
          {
            orgId: this.orgId,
            keyId: this.keyId,
            ancestorKeyIds: this.ancestorKeyIds,
            day: this.day,
            priceCents: 0,
            reservationId: this.reservationId,
            idempotencyKey: null,
            event: encodeCall(failed),
            record: null,
            idempotencyTtlMs: IDEMPOTENCY_TTL_MS,
            nowMs: this.ctx.clock.now().getTime(),
          },
          { ...failed, creditAppliedCents: 0, billableCents: 0 },
        );
        return;
      } catch (err) {
        this.ctx.log.warn({ err, usage_id: failed.usageId }, 'failed call not streamed; booking it in Postgres');
      }
    } else if (this.kind === 'admitted') {
      try {
        const entry = await this.ctx.spend.fail(this, encodeCall(failed));
        this.ctx.drain.add(entry, { ...failed, creditAppliedCents: 0, billableCents: 0 });
        return;
      } catch (err) {
        this.ctx.log.warn({ err, usage_id: failed.usageId }, 'void failed; the sweeper releases the hold');
      }
    }
    this.ctx.committer.commit(failed).catch((e: unknown) => this.ctx.log.warn({ err: e }, 'failed call not recorded'));
  }

  /** Release the hold without recording anything (nothing will be spent); never throws. */
  release(): Promise<unknown> {
    this.ctx.ended?.(this.reservationId);
    this.endLeased(false);
    if (this.kind !== 'admitted') return Promise.resolve();
    return this.ctx.spend.void(this).catch(() => undefined);
  }

  /** A free call while the fast state is down: booked in Postgres before its answer. */
  private async commitInPostgres(call: CallRecord, price: EffectivePrice): Promise<Settled> {
    let booked;
    try {
      booked = await this.ctx.committer.commit(this.unsynced(call));
    } catch (err) {
      throw new ServiceUnavailableError('The call could not be recorded; it was not charged. Retry later.', {
        cause: err,
      });
    }
    if (!booked.duplicate) await this.bookedPastSettle();
    return { kind: 'committed', meta: billingMeta(call.requestId, this.priceCents, 0, 0, price) };
  }
}

function billingMeta(
  requestId: string,
  priceCents: number,
  creditAppliedCents: number,
  billableCents: number,
  price: EffectivePrice,
): BillingMeta {
  const meta: BillingMeta = {
    request_id: requestId,
    cost_cents: priceCents,
    price_cents_effective: priceCents,
    credit_applied_cents: creditAppliedCents,
    billable_cents: billableCents,
  };
  if (price.price_increase) meta.price_increase = price.price_increase;
  if (price.discount) meta.discount = { ...price.discount };
  return meta;
}

/**
 * The replay record of an idempotent call (`d|hash|` + its billing meta as JSON, key for key as `billingMeta`), split
 * around the charge's split, which the settle step fills in.
 */
export function replayRecordParts(
  requestHash: string,
  requestId: string,
  priceCents: number,
  price: EffectivePrice,
): NonNullable<SettleInput['record']> {
  let tail = '';
  if (price.price_increase) tail += `,"price_increase":${JSON.stringify(price.price_increase)}`;
  if (price.discount) tail += `,"discount":${JSON.stringify({ ...price.discount })}`;
  return {
    head:
      `d|${requestHash}|{"request_id":${JSON.stringify(requestId)},"cost_cents":${priceCents},` +
      `"price_cents_effective":${priceCents},"credit_applied_cents":`,
    middle: ',"billable_cents":',
    tail: `${tail}}`,
  };
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
