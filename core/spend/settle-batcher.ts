/**
 * Batched settlement (issue 23, step 2): calls that end in the same turn of the event loop, or while their batch's
 * previous settle is in flight, settle together in one SpendStore.settleBatch, one script on Redis with one stream
 * entry for the lot. Each call is still decided as its own settle would decide it (in order, over a running balance),
 * and each caller's answer still follows the step's reply, so the durable point of a call is unchanged. No timers: the
 * batch closes at the end of the turn (`setImmediate`), so at low rates a batch is one call.
 *
 * The settled calls of a batch go to the usage drain together, as the one stream entry they share; the drain books
 * them in Postgres and acknowledges the entry once all of them are booked.
 */
import type { SettleInput, SettleOutcome, SpendStore } from './spend-store.js';
import type { UsageDrain } from './usage-drain.js';
import type { CallRecord } from './usage-committer.js';

/** At most this many calls per script (a bounded reply and a bounded time inside Redis). */
const MAX_BATCH = 128;
/**
 * Under load (the bucket's previous batch held at least LINGER_FROM calls), a batch waits up to LINGER_TURNS more
 * turns of the event loop while it is smaller than the previous one: the calls whose upstream answers arrive in those
 * turns join it, so a busy process settles in fewer, larger scripts (fewer Redis commands and less work per call). A
 * turn is a pass over the I/O ready now, not a timer: an idle process never waits, and a call at a low rate settles
 * at the end of its own turn as before.
 */
const LINGER_FROM = 8;
const LINGER_TURNS = 2;

interface Waiting {
  input: SettleInput;
  call: CallRecord;
  resolve: (outcome: SettleOutcome) => void;
  reject: (err: unknown) => void;
}

interface Queue {
  waiting: Waiting[];
  /** A settle of this batch key is in flight: calls wait and go in the next one. */
  busy: boolean;
  scheduled: boolean;
  /** The size of the previous batch (the load signal for lingering) and the turns this one has waited. */
  last: number;
  turns: number;
}

export class SettleBatcher {
  private readonly queues = new Map<string, Queue>();

  constructor(
    private readonly spend: SpendStore,
    private readonly drain: UsageDrain,
    private readonly maxBatch = MAX_BATCH,
  ) {}

  /** Settle one call (see SpendStore.settle); rejects when the step's outcome is unknown. */
  settle(input: SettleInput, call: CallRecord): Promise<SettleOutcome> {
    const key = this.spend.batchKey(input.orgId);
    let queue = this.queues.get(key);
    if (!queue) this.queues.set(key, (queue = { waiting: [], busy: false, scheduled: false, last: 0, turns: 0 }));
    const q = queue;
    return new Promise<SettleOutcome>((resolve, reject) => {
      q.waiting.push({ input, call, resolve, reject });
      this.schedule(key, q);
    });
  }

  private schedule(key: string, q: Queue): void {
    if (q.busy || q.scheduled || q.waiting.length === 0) return;
    q.scheduled = true;
    const turn = () => {
      if (this.lingers(q) && q.turns < LINGER_TURNS) {
        q.turns += 1;
        setImmediate(turn);
        return;
      }
      q.turns = 0;
      q.scheduled = false;
      void this.run(key, q);
    };
    setImmediate(turn);
  }

  /** Under load and smaller than the previous batch: worth another turn (see LINGER_FROM). */
  private lingers(q: Queue): boolean {
    return q.last >= LINGER_FROM && q.waiting.length < Math.min(q.last, this.maxBatch);
  }

  private async run(key: string, q: Queue): Promise<void> {
    if (q.busy || q.waiting.length === 0) return;
    const batch = q.waiting.splice(0, this.maxBatch);
    q.last = batch.length;
    q.busy = true;
    try {
      const { entry, results } = await this.spend.settleBatch(batch.map((w) => w.input));
      if (entry) {
        const settled: CallRecord[] = [];
        results.forEach((r, i) => {
          if (r.outcome !== 'settled') return;
          settled.push({ ...batch[i]!.call, creditAppliedCents: r.creditAppliedCents, billableCents: r.billableCents });
        });
        this.drain.addEntry(entry, settled);
      }
      batch.forEach((w, i) => w.resolve(results[i]!));
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      q.busy = false;
      if (q.waiting.length > 0 && this.lingers(q)) this.schedule(key, q);
      else if (q.waiting.length > 0) void this.run(key, q);
      else if (!q.scheduled && q.last < LINGER_FROM) this.queues.delete(key);
    }
  }
}
