/**
 * Event-loop stalls: how often this process's event loop was blocked for longer than STALL_MS (issue 32: the
 * all-in-one `npm start` may show no more of them than a bare proxy under the same load). Read from
 * `perf_hooks.monitorEventLoopDelay` (a libuv timer sampling the loop's delay every RESOLUTION_MS): every WINDOW_MS
 * the samples of the window over STALL_MS are counted (from the histogram's percentiles) and the histogram reset.
 * Served as the `event_loop_stalls_total` counter (core/metrics/metrics.ts) and read by the gateway benchmark.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export const STALL_MS = 20;
const RESOLUTION_MS = 10;
const WINDOW_MS = 200;

export class StallMonitor {
  private histogram: IntervalHistogram | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stalls = 0;
  private longestMs = 0;

  /** Stalls over STALL_MS since start. */
  get count(): number {
    this.read();
    return this.stalls;
  }

  /** The longest delay seen since start, ms. */
  get longest(): number {
    this.read();
    return this.longestMs;
  }

  start(): this {
    if (this.histogram) return this;
    this.histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.histogram.enable();
    this.timer = setInterval(() => this.read(), WINDOW_MS);
    this.timer.unref();
    return this;
  }

  stop(): void {
    this.read();
    this.histogram?.disable();
    if (this.timer) clearInterval(this.timer);
    this.histogram = undefined;
  }

  /** Fold the window's samples into the count, then reset the histogram. */
  private read(): void {
    const h = this.histogram;
    if (!h || h.count === 0) return;
    const maxMs = h.max / 1e6;
    if (maxMs > this.longestMs) this.longestMs = maxMs;
    if (maxMs > STALL_MS) this.stalls += samplesOver(h, STALL_MS * 1e6);
    h.reset();
  }
}

/** How many of the histogram's samples exceed `ns` (at least one: its maximum does). */
function samplesOver(h: IntervalHistogram, ns: number): number {
  let below = 0;
  for (const [percentile, value] of h.percentiles) {
    if (value > ns) break;
    below = percentile;
  }
  return Math.max(1, Math.round((h.count * (100 - below)) / 100));
}

/** The process's one monitor (started by whoever serves it: the metrics, a benchmark proxy). */
export const processStalls = new StallMonitor();
