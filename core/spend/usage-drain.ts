/**
 * The usage drain (docs/durability.md): moves calls the fast state made durable (the settle and void scripts append
 * them to a usage stream and deliver them to this process in the same step) into Postgres, then acknowledges them,
 * which releases the pending spend they held in the fast state.
 *
 * - Calls this process settled are handed over in memory (`add`) and go to Postgres in the group commit's next batch:
 *   in steady state a call is in Postgres a few milliseconds after its answer (the commit starts at most every
 *   COMMIT_INTERVAL_MS, gateway/app.ts).
 * - A commit that fails (Postgres down) is retried with backoff until it succeeds, each call in a batch of its own (so
 *   one call Postgres refuses cannot hold the others back); the entries stay in this process's pending list meanwhile.
 * - Every `claimIntervalMs`, entries another drainer took and has not acknowledged for `claimIdleMs` (it died) are
 *   claimed and drained here. A call committed by a drainer that died before its ack is drained again: the commit is
 *   idempotent on the usage id and the ack releases pending spend once (only the acknowledgement that removes the
 *   entry does).
 * - Acks are batched per turn of the event loop (one script per stream); a failed ack leaves the entry pending, to be
 *   claimed and acknowledged again (Postgres skips it).
 */
import type { Logger } from '../logger.js';
import { decodeCall } from './call-codec.js';
import type { SpendStore, StreamedCall, UsageAck, UsageEntryRef } from './spend-store.js';
import type { CallRecord, CommittedCall, UsageCommitter } from './usage-committer.js';

export interface UsageDrainOptions {
  /** An entry not acknowledged for this long is claimed by another drainer (default 10 s). */
  claimIdleMs?: number;
  /** How often this process looks for such entries (default 2 s; 0: never, for tests that drive it). */
  claimIntervalMs?: number;
  /** Told of each call once Postgres has it (the operators' drain lag and count). */
  onBooked?: (call: CallRecord) => void;
}

const CLAIM_BATCH = 1_000;
/** Each claim interval is covered by this many smaller scans of the streams (no burst of 1,024 scripts at once). */
const SCAN_PARTS = 16;
const MAX_BACKOFF_MS = 5_000;

export class UsageDrain {
  private acks: UsageAck[] = [];
  private ackScheduled = false;
  /** Entries being committed by this process (so a claim of its own slow entries does not double them). */
  private readonly inFlight = new Set<string>();
  private readonly idle: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private claiming: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly spend: SpendStore,
    private readonly committer: UsageCommitter,
    private readonly log: Logger,
    private readonly options: UsageDrainOptions = {},
  ) {}

  /** Calls handed over and not yet committed and acknowledged (the operators' backlog gauge). */
  get pending(): number {
    return this.inFlight.size;
  }

  start(): void {
    const every = this.options.claimIntervalMs ?? 2_000;
    if (every <= 0) return;
    this.timer = setInterval(
      () => {
        this.claiming = this.claimOnce({ of: SCAN_PARTS }).catch((err: unknown) =>
          this.log.warn({ err }, 'usage claim failed'),
        );
      },
      Math.max(1, Math.floor(every / SCAN_PARTS)),
    );
    this.timer.unref();
  }

  /** A call this process made durable: commit it to Postgres, then acknowledge it. */
  add(entry: UsageEntryRef, call: CallRecord): void {
    this.addEntry(entry, [call]);
  }

  /** A stream entry's calls (a settle batch): commit each to Postgres, then acknowledge the entry once. */
  addEntry(entry: UsageEntryRef, calls: readonly CallRecord[]): void {
    const id = `${entry.stream}/${entry.id}`;
    if (this.inFlight.has(id)) return;
    this.inFlight.add(id);
    void this.commitEntry(entry, calls, id);
  }

  /** Claim entries other drainers abandoned and drain them here. Returns how many were claimed. */
  async claimOnce(part?: { of: number }): Promise<number> {
    const claimed = await this.spend.claimUsage(this.options.claimIdleMs ?? 10_000, CLAIM_BATCH, part);
    for (const c of claimed) this.addEntry(c.entry, c.calls.map(parseCall));
    if (claimed.length > 0) this.log.warn({ claimed: claimed.length }, 'claimed usage events another drainer left');
    return claimed.length;
  }

  /** Resolves when every call handed over so far is committed and acknowledged (shutdown, tests). */
  async flush(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((this.inFlight.size > 0 || this.acks.length > 0 || this.ackScheduled) && Date.now() < deadline) {
      await new Promise<void>((r) => {
        this.idle.push(r);
        setTimeout(r, 50).unref();
      });
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.claiming;
    await this.flush();
  }

  private async commitEntry(entry: UsageEntryRef, calls: readonly CallRecord[], id: string): Promise<void> {
    const committed = await Promise.all(calls.map((call) => this.commit(call)));
    // Shutting down with Postgres unreachable: the entry stays pending in the stream for another drainer.
    if (committed.every((c) => c !== null)) {
      this.queueAcks(
        calls.map((call, i) => ({
          entry,
          orgId: call.orgId,
          keyId: call.keyId,
          ancestorKeyIds: call.ancestorKeyIds ?? [],
          day: call.day,
          pendingCents: call.outcome === 'success' ? call.priceCents : 0,
          org: committed[i]!.org,
          key: committed[i]!.key,
          ancestorSpentCents: committed[i]!.ancestorSpentCents,
          ancestorDaySpentCents: committed[i]!.ancestorDaySpentCents,
        })),
      );
    }
    this.done(id);
  }

  /** Book one call in Postgres, retrying with backoff until it is (null: given up while stopping). */
  private async commit(call: CallRecord): Promise<CommittedCall | null> {
    for (let attempt = 0; ; attempt++) {
      try {
        // A retry goes alone, so a call Postgres refuses for good cannot keep failing the batches of others.
        const committed = await (attempt === 0 ? this.committer.commit(call) : this.committer.commitAlone(call));
        this.options.onBooked?.(call);
        return committed;
      } catch (err) {
        if (this.stopped && attempt > 3) return null;
        if (attempt === 0) this.log.warn({ err, usage_id: call.usageId }, 'usage drain commit failed; retrying');
        await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, MAX_BACKOFF_MS)).unref());
      }
    }
  }

  private done(id: string): void {
    this.inFlight.delete(id);
    this.wakeIfIdle();
  }

  /** Every ack of one entry joins the same batch (the entry is acknowledged once, for all its calls). */
  private queueAcks(acks: UsageAck[]): void {
    for (const ack of acks) this.acks.push(ack);
    this.scheduleAck();
  }

  /** One ackUsage per turn of the event loop, one at a time. */
  private scheduleAck(): void {
    if (this.ackScheduled || this.acks.length === 0) return;
    this.ackScheduled = true;
    setImmediate(() => {
      const batch = this.acks;
      this.acks = [];
      this.spend
        .ackUsage(batch)
        .catch((err: unknown) => this.log.warn({ err, acks: batch.length }, 'usage ack failed; entries stay pending'))
        .finally(() => {
          this.ackScheduled = false;
          this.scheduleAck();
          this.wakeIfIdle();
        });
    });
  }

  private wakeIfIdle(): void {
    if (this.inFlight.size === 0 && this.acks.length === 0 && !this.ackScheduled) {
      for (const r of this.idle.splice(0)) r();
    }
  }
}

/** A streamed call back into a CallRecord with its split. */
function parseCall(c: StreamedCall): CallRecord {
  return decodeCall(c.event, c.creditAppliedCents, c.billableCents);
}
