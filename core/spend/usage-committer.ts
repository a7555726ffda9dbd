/**
 * Group commit of the gateway's calls into Postgres (DESIGN.md, Money; docs/durability.md): every finished call's usage
 * event and, for the paid calls, the books per batch (docs/decisions.md, Books per batch): per consumer org, the calls
 * the commit charged form a usage batch (usage_batches; two when some calls have a billable part and some do not: the
 * collected and the billed calls become payable to providers at different times), each with ONE consumer ledger row
 * (`usage_batch:{batch}`, −the batch's charge, an exact balance_after) and one queued earning per provider
 * (earning_accruals: the sums of each call's charge and of each call's fee, split call by call; folded into the
 * provider's ledger off the hot path, so no call locks the provider's org row). Each usage event points at its batch.
 * The money rules stay per call (charge, credit applied, billable, key spend). Many calls share one transaction: calls
 * queue while a batch is in flight, then go together as multi-row statements. The usage drain
 * (core/spend/usage-drain.ts) feeds it the calls the fast state made durable; a free call served while the fast state
 * is down comes here directly. Idempotent on the usage id: a call already in Postgres is not booked again.
 * Consumer orgs are locked in id order (no deadlocks between gateway processes), balances are computed here from the
 * locked rows, so every ledger row carries its exact balance_after, and the org, key and key-day totals come back for
 * the fast state. A usage batch only ever holds calls whose usage events the same transaction inserts (their primary
 * key): a drain retried after a crash between commit and acknowledgement skips the calls already booked, so no call is
 * in two batches and no batch is written twice.
 *
 * Idempotency backstop: a successful call made with an Idempotency-Key claims (org, key, client key) in
 * idempotency_records in the same statement. A claim that conflicts means an earlier call with that key already
 * committed (the fast state had forgotten it): this call is then not booked at all and comes back `duplicate`.
 *
 * A prepaid org's balance cannot go negative (a CHECK). The fast state reserves before every call, so this only happens
 * when a debit from elsewhere (a chargeback, a payout) lands while a call is in flight; the call is then charged what
 * is left, the rest is recorded as uncollected (`billable_cents` on the usage event) and the provider earns what was
 * charged, so the books still balance.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.js';
import { writeCarefully } from './usage-careful-write.js';
import { commitJson, committedCalls, runCommit } from './usage-commit-statement.js';
import { leanCommitted, leanEligible, leanParams, runLeanCommit } from './usage-lean-commit.js';

export interface CallRecord {
  usageId: string;
  orgId: string;
  keyId: string;
  /** The key's ancestors: a paid call's spend counts against each of them too. */
  ancestorKeyIds?: readonly string[];
  apiId: string;
  apiSlug: string;
  endpointId: string;
  providerOrgId: string;
  method: string;
  path: string;
  status: number;
  outcome: 'success' | 'failed';
  /** What the call costs (0 for free endpoints and failed calls). */
  priceCents: number;
  /** The effective price at the time of the call (recorded even when the call is not charged). */
  priceCentsEffective: number;
  latencyMs: number;
  idempotencyKey: string | null;
  /** With an idempotency key: the request's hash and the billing meta a replay adds (increase, discount). */
  requestHash?: string;
  replayExtra?: Record<string, unknown> | null;
  /** The gateway's request id. */
  requestId: string;
  /** The caller's own X-Request-Id, kept apart. */
  clientRequestId?: string | null;
  /** UTC day of the call, `YYYY-MM-DD`. */
  day: string;
  at: Date;
  /** The charge's split as the fast state decided it when the call settled (the answer said so); else computed here. */
  creditAppliedCents?: number;
  billableCents?: number;
  /** Booked past the fast state's settle: its key is listed in idempotency_unsynced in the same statement. */
  unsynced?: boolean;
}

export interface CommittedCall {
  /** An earlier call with the same idempotency key is already booked: this one was not (answer it as a replay). */
  duplicate: boolean;
  creditAppliedCents: number;
  billableCents: number;
  /** The consumer org's balance after the batch (for the fast state). */
  org: { creditCents: number; balanceVersion: number } | null;
  key: { spentCents: number; daySpentCents: number } | null;
  /** Each ancestor's lifetime spend after the batch, in `ancestorKeyIds` order (for the fast state). */
  ancestorSpentCents: number[] | null;
  /** Each ancestor's spend on the call's day after the batch, in `ancestorKeyIds` order (for the fast state). */
  ancestorDaySpentCents: number[] | null;
}

interface Pending {
  call: CallRecord;
  resolve: (c: CommittedCall) => void;
  reject: (e: unknown) => void;
}

const MAX_BATCH = 256;
/**
 * Batches in flight at once per process. One: measured on the benchmark, two or four overlapping batches were slower
 * (they queue on the same org rows and each is smaller). Orgs are locked in id order first in every batch, so batches
 * of several gateway processes queue instead of deadlocking.
 */
const MAX_IN_FLIGHT = 1;

const CHECK_VIOLATION = '23514';
const UNIQUE_VIOLATION = '23505';

export class UsageCommitter {
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly drained: (() => void)[] = [];

  constructor(
    private readonly deps: {
      orm: MikroORM;
      logger: Logger;
      feePercent: number;
      /** Use a named prepared statement (real Postgres; the embedded PGlite path runs it unprepared). */
      prepared?: boolean;
    },
    private readonly options: {
      maxBatch?: number;
      maxInFlight?: number;
      /**
       * A batch starts at least this long after the previous one started (default 0). For the embedded database,
       * whose statements run on this process's event loop: fewer, larger transactions, so a call's answer rarely
       * waits behind one (the calls are durable in the fast state's stream meanwhile; `flush` does not wait).
       */
      minIntervalMs?: number;
      /**
       * Book the common case with the lean statement (core/spend/usage-lean-commit.ts; default on). Off: every batch
       * through the full statement (the tests that compare the two).
       */
      lean?: boolean;
    } = {},
  ) {}

  private lastStart = 0;
  /** A batch waiting for the interval, and how to start it at once (`flush`). */
  private waiting: NodeJS.Timeout | undefined;
  private startNow: (() => void) | undefined;
  /** `flush` is waiting: batches go at once. */
  private hurry = 0;

  commit(call: CallRecord): Promise<CommittedCall> {
    return new Promise<CommittedCall>((resolve, reject) => {
      this.queue.push({ call, resolve, reject });
      this.pump();
    });
  }

  /**
   * Commit one call in a batch of its own, now (the drain's retries): a call Postgres keeps refusing then fails only
   * itself, never the calls that would have shared its batch.
   */
  commitAlone(call: CallRecord): Promise<CommittedCall> {
    return new Promise<CommittedCall>((resolve, reject) => {
      void this.writeBatch([{ call, resolve, reject }]);
    });
  }

  /** Resolves when everything queued so far is committed (shutdown). */
  async flush(): Promise<void> {
    this.hurry += 1;
    try {
      if (this.waiting) this.startNow?.();
      this.pump();
      while (this.queue.length > 0 || this.inFlight > 0) {
        await new Promise<void>((r) => this.drained.push(r));
      }
    } finally {
      this.hurry -= 1;
    }
  }

  /**
   * Start a batch on the next turn of the event loop (so the calls finishing in this one join it), unless the
   * maximum of batches is already in flight: then the queue waits and grows into the next batch.
   */
  private pump(): void {
    if (this.scheduled || this.queue.length === 0 || this.inFlight >= (this.options.maxInFlight ?? MAX_IN_FLIGHT)) {
      return;
    }
    this.scheduled = true;
    const wait = this.hurry > 0 ? 0 : this.lastStart + (this.options.minIntervalMs ?? 0) - performance.now();
    const start = () => {
      this.scheduled = false;
      if (this.queue.length === 0) return;
      this.lastStart = performance.now();
      const batch = this.queue.splice(0, this.options.maxBatch ?? MAX_BATCH);
      this.inFlight += 1;
      void this.writeBatch(batch).finally(() => {
        this.inFlight -= 1;
        if (this.queue.length === 0 && this.inFlight === 0) for (const r of this.drained.splice(0)) r();
        this.pump();
      });
      this.pump();
    };
    if (wait <= 0) {
      setImmediate(start);
      return;
    }
    this.waiting = setTimeout(() => {
      this.waiting = undefined;
      start();
    }, wait);
    this.startNow = () => {
      clearTimeout(this.waiting);
      this.waiting = undefined;
      setImmediate(start);
    };
  }

  private async writeBatch(batch: Pending[]): Promise<void> {
    try {
      let results: CommittedCall[];
      try {
        results = await this.writeOneStatement(batch, false).catch((err: unknown) => {
          if ((err as { code?: string }).code !== UNIQUE_VIOLATION) throw err;
          return this.writeOneStatement(batch, true); // some of the batch is booked already: skip those
        });
      } catch (err) {
        // A prepaid balance would go negative (a debit from elsewhere raced an in-flight call): the careful path
        // (core/spend/usage-careful-write.ts), where such a call is charged what is left.
        if ((err as { code?: string }).code !== CHECK_VIOLATION) throw err;
        results = await this.deps.orm.em
          .fork()
          .transactional((tem) => writeCarefully(tem, batch, this.deps.feePercent));
      }
      batch.forEach((p, i) => p.resolve(results[i]!));
    } catch (err) {
      this.deps.logger.error({ err, calls: batch.length }, 'usage commit failed');
      for (const p of batch) p.reject(err);
    }
  }

  /**
   * The common case in one statement (core/spend/usage-commit-statement.ts; one round trip, its own implicit
   * transaction): the orgs are locked in id order; each ledger row's balance_after is the locked balance plus a running
   * sum in call order. The prepaid CHECK makes it fail rather than overdraw.
   */
  private async writeOneStatement(batch: Pending[], dedup: boolean): Promise<CommittedCall[]> {
    if (!dedup && this.options.lean !== false && leanEligible(batch)) {
      const params = leanParams(batch, this.deps.feePercent);
      return leanCommitted(batch, await runLeanCommit(this.deps.orm, this.deps.prepared === true, params));
    }
    const json = commitJson(batch, this.deps.feePercent);
    return committedCalls(batch, await runCommit(this.deps.orm, this.deps.prepared === true, json, dedup));
  }
}
