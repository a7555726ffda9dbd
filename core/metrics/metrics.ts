/**
 * The operators' metrics of one process (prom-client; docs/operations.md lists each series and what to alert on).
 * One `Metrics` per process, created with the services; `platform/metrics-server.ts` serves it on
 * `METRICS_PORT`. Labels are bounded: routes are templates (`/v1/keys/:id`), APIs are listing slugs, outcomes and
 * reasons are fixed words. Values that live elsewhere (open reservations, the drain's backlog, ledger drift) are read
 * at scrape time through the `watch*` hooks, so the hot path pays for none of them.
 */
import client, {
  type Counter,
  type Gauge,
  type Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  type Registry,
} from 'prom-client';
import { processStalls, STALL_MS } from '../stall-monitor.js';

/** Seconds buckets from 1 ms to 30 s: HTTP requests, upstream calls, drain lag. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface ReservationsView {
  open: number;
  /** Age of the oldest open reservation, in seconds (0 when none). */
  oldestAgeSeconds: number;
}

/** A registry's series as prom-client's JSON. */
export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

export class Metrics {
  readonly registry: Registry = new client.Registry();
  private readonly registers = [this.registry];
  readonly httpRequests: Counter<'surface' | 'route' | 'method' | 'status'> = this.counter(
    'http_requests_total',
    'HTTP requests answered, by surface (api, gateway, mcp), route template, method and status.',
    ['surface', 'route', 'method', 'status'],
  );
  readonly httpDuration: Histogram<'surface' | 'route' | 'method' | 'status'> = this.histogram(
    'http_request_duration_seconds',
    'Time from the request to the end of its answer, by surface, route template, method and status.',
    ['surface', 'route', 'method', 'status'],
  );
  readonly admissions: Counter<'outcome'> = this.counter(
    'gateway_admissions_total',
    'Gateway admission decisions for paid calls (admitted, replay, rate_limited, budget, funds, ...).',
    ['outcome'],
  );
  readonly idempotencyLookups: Counter<'reason'> = this.counter(
    'gateway_idempotency_lookups_total',
    'Idempotency-Keys the gateway looked up in Postgres before the upstream call, by why Redis could not answer ' +
      '(seen: in the seen set; unstamped: the set is being rebuilt; unsynced: direct bookings not yet in Redis; ' +
      'unchecked: no check made).',
    ['reason'],
  );
  readonly upstreamDuration: Histogram<'api' | 'outcome'> = this.histogram(
    'gateway_upstream_duration_seconds',
    'Upstream call time by API (listing slug) and outcome (ok, error).',
    ['api', 'outcome'],
  );
  readonly upstreamErrors: Counter<'api' | 'reason'> = this.counter(
    'gateway_upstream_errors_total',
    'Upstream failures by API and reason (timeout, connect, status, size, reset, rate_limited).',
    ['api', 'reason'],
  );
  readonly drainLag: Histogram = this.histogram(
    'usage_drain_lag_seconds',
    'Time from a call being settled in Redis to its usage row and ledger debit committed in Postgres.',
  );
  readonly drainBooked: Counter<'outcome'> = this.counter(
    'usage_drain_booked_total',
    'Calls the usage drain booked in Postgres, by outcome (success, failed).',
    ['outcome'],
  );
  readonly activities: Counter<'activity' | 'outcome'> = this.counter(
    'temporal_activity_outcomes_total',
    'Temporal activity executions in this worker, by activity type and outcome (completed, failed).',
    ['activity', 'outcome'],
  );
  readonly healthUp: Gauge<'component' | 'backend'> = this.gauge(
    'health_component_up',
    'Last health check of a component this process depends on (db, counters, temporal): 1 up, 0 down.',
    ['component', 'backend'],
  );
  private defaultsOn = false;

  /** Process metrics (memory, event-loop delay, GC, handles): once, by the process that serves the metrics. */
  collectProcessMetrics(): void {
    if (this.defaultsOn) return;
    this.defaultsOn = true;
    client.collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 20 });
    processStalls.start();
    this.watchedCounter(
      'event_loop_stalls_total',
      `Times this process's event loop was blocked for more than ${STALL_MS} ms (core/stall-monitor.ts).`,
      () => processStalls.count,
    );
    this.watchedCounter(
      'gc_pauses_long_total',
      `Garbage collections of this process that took more than ${STALL_MS} ms (a cause of event-loop stalls).`,
      () => processStalls.gcPauses,
    );
  }

  /** Open reservations of this gateway process and the oldest one's age, read at scrape time. */
  watchReservations(view: () => ReservationsView): void {
    this.watched(
      'gateway_reservations_open',
      'Reservations this gateway holds for calls in flight (admitted, not yet settled or voided).',
      () => view().open,
    );
    this.watched(
      'gateway_reservation_oldest_age_seconds',
      'Age of the oldest reservation this gateway holds (a stuck call shows here before the sweeper acts).',
      () => view().oldestAgeSeconds,
    );
  }

  /** Calls settled by this process and not yet acknowledged as booked in Postgres. */
  watchDrainBacklog(pending: () => number): void {
    this.watched(
      'usage_drain_pending',
      'Settled calls this process has handed to the usage drain that Postgres has not booked yet.',
      pending,
    );
  }

  /** Orgs whose cached balance differs from their ledger sum (the books check), refreshed at most every `ttlMs`. */
  watchLedgerDrift(drifted: () => Promise<number>, ttlMs = 60_000): void {
    let cached: { at: number; value: number } | undefined;
    this.watched(
      'ledger_drift_orgs',
      'Orgs whose cached balance does not equal the sum of their ledger rows (must be 0).',
      async () => {
        if (!cached || Date.now() - cached.at > ttlMs) {
          cached = { at: Date.now(), value: await drifted() };
        }
        return cached.value;
      },
    );
  }

  /** Another registry's series served with this one's (the all-in-one's gateway thread, labelled thread="gateway"). */
  private readonly remotes: Array<() => Promise<MetricsJson>> = [];

  /**
   * `thread`: a label on every series of this registry (the all-in-one's gateway thread: its series and the main
   * thread's share one /metrics, and each thread has its own event loop, heap and stall count).
   */
  constructor(options: { thread?: string } = {}) {
    if (options.thread) this.registry.setDefaultLabels({ thread: options.thread });
  }

  /** Serve `read`'s series too (prom-client's aggregation: same name and labels add up, other labels stay apart). */
  addRemote(read: () => Promise<MetricsJson>): void {
    this.remotes.push(read);
  }

  /** This registry's series as prom-client's JSON (what addRemote reads from another thread). */
  json(): Promise<MetricsJson> {
    return this.registry.getMetricsAsJSON();
  }

  async exposition(): Promise<string> {
    if (this.remotes.length === 0) return this.registry.metrics();
    const parts = await Promise.all([this.json(), ...this.remotes.map((read) => read().catch(() => []))]);
    return client.AggregatorRegistry.aggregate(parts).metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private counter<L extends string>(name: string, help: string, labelNames: L[]): Counter<L> {
    return new client.Counter({ name, help, labelNames, registers: this.registers });
  }

  /** Seconds, in LATENCY_BUCKETS. */
  private histogram<L extends string>(name: string, help: string, labelNames: L[] = []): Histogram<L> {
    return new client.Histogram({ name, help, labelNames, buckets: LATENCY_BUCKETS, registers: this.registers });
  }

  private gauge<L extends string>(name: string, help: string, labelNames: L[]): Gauge<L> {
    return new client.Gauge({ name, help, labelNames, registers: this.registers });
  }

  /** A gauge whose value lives elsewhere: `read` at scrape time. */
  /** A counter whose total is read at scrape time (it only grows). */
  private watchedCounter(name: string, help: string, read: () => number): void {
    new client.Counter({
      name,
      help,
      registers: this.registers,
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }

  private watched(name: string, help: string, read: () => number | Promise<number>): void {
    new client.Gauge({
      name,
      help,
      registers: this.registers,
      async collect() {
        this.set(await read());
      },
    });
  }
}
