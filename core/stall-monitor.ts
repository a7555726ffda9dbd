/**
 * Event-loop stalls: how often this process's event loop was blocked for longer than STALL_MS (issue 32: the
 * all-in-one `npm start` may show no more of them than a bare proxy under the same load). A timer ticks every
 * RESOLUTION_MS; a tick that comes more than STALL_MS late means the loop could not turn for that long: one stall,
 * however long. (A `perf_hooks.monitorEventLoopDelay` histogram read and reset per window loses the first delay
 * after each reset, so a stall right after a read went uncounted: measured, and replaced by this.) Garbage
 * collections that paused the process longer than STALL_MS are counted beside them (`gc` performance entries), so a
 * stall can be told from a collection. Served as `event_loop_stalls_total` and `gc_pauses_long_total`
 * (core/metrics/metrics.ts) and read by the gateway benchmark.
 */
import { PerformanceObserver } from 'node:perf_hooks';

export const STALL_MS = 20;
const RESOLUTION_MS = 10;

export class StallMonitor {
  private timer: NodeJS.Timeout | undefined;
  private gcObserver: PerformanceObserver | undefined;
  private last = 0;
  private stalls = 0;
  private longestMs = 0;
  private longGcs = 0;

  /** Stalls over STALL_MS since start. */
  get count(): number {
    this.tick();
    return this.stalls;
  }

  /** The longest delay seen since start, ms. */
  get longest(): number {
    this.tick();
    return this.longestMs;
  }

  /** Garbage collections longer than STALL_MS since start. */
  get gcPauses(): number {
    return this.longGcs;
  }

  start(): this {
    if (this.timer) return this;
    this.last = performance.now();
    this.timer = setInterval(() => this.tick(), RESOLUTION_MS);
    this.timer.unref();
    this.gcObserver = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (entry.duration > STALL_MS) this.longGcs += 1;
    });
    this.gcObserver.observe({ entryTypes: ['gc'] });
    return this;
  }

  stop(): void {
    this.tick();
    if (this.timer) clearInterval(this.timer);
    this.gcObserver?.disconnect();
    this.timer = undefined;
    this.gcObserver = undefined;
  }

  /** How late this moment is against the previous tick's schedule: a stall when over STALL_MS. */
  private tick(): void {
    if (!this.timer) return;
    const now = performance.now();
    const late = now - this.last - RESOLUTION_MS;
    this.last = now;
    if (late > this.longestMs) this.longestMs = late;
    if (late > STALL_MS) this.stalls += 1;
  }
}

/** The process's one monitor (started by whoever serves it: the metrics, a benchmark proxy). */
export const processStalls = new StallMonitor();
