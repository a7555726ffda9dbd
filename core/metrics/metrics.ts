/**
 * The operators' metrics of one process (prom-client; docs/operations.md lists each series and what to alert on).
 * One `Metrics` per process, created with the services; `platform/metrics-server.ts` serves it on
 * `METRICS_PORT`. Labels are bounded: routes are templates (`/v1/keys/:id`), APIs are listing slugs, outcomes and
 * reasons are fixed words. Values that live elsewhere (open reservations, the drain's backlog, ledger drift) are read
 * at scrape time through the `watch*` hooks, so the hot path pays for none of them.
 */
import client, { type Counter, type Gauge, type Histogram, type Registry } from 'prom-client';

/** Seconds buckets from 1 ms to 30 s: HTTP requests, upstream calls, drain lag. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface ReservationsView {
  open: number;
  /** Age of the oldest open reservation, in seconds (0 when none). */
  oldestAgeSeconds: number;
}

export class Metrics {
  readonly registry: Registry = new client.Registry();
  private readonly registers = [this.registry];
  readonly httpRequests: Counter<'surface' | 'route' | 'method' | 'status'> = new client.Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by surface (api, gateway, mcp), route template, method and status.',
    labelNames: ['surface', 'route', 'method', 'status'],
    registers: this.registers,
  });
  readonly httpDuration: Histogram<'surface' | 'route' | 'method' | 'status'> = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request to the end of its answer, by surface, route template, method and status.',
    labelNames: ['surface', 'route', 'method', 'status'],
    buckets: LATENCY_BUCKETS,
    registers: this.registers,
  });
  readonly admissions: Counter<'outcome'> = new client.Counter({
    name: 'gateway_admissions_total',
    help: 'Gateway admission decisions for paid calls (admitted, replay, rate_limited, budget, funds, ...).',
    labelNames: ['outcome'],
    registers: this.registers,
  });
  readonly idempotencyLookups: Counter<'reason'> = new client.Counter({
    name: 'gateway_idempotency_lookups_total',
    help:
      'Idempotency-Keys the gateway looked up in Postgres before the upstream call, by why Redis could not answer ' +
      '(seen: in the seen set; unstamped: the set is being rebuilt; unsynced: direct bookings not yet in Redis; ' +
      'unchecked: no check made).',
    labelNames: ['reason'],
    registers: this.registers,
  });
  readonly upstreamDuration: Histogram<'api' | 'outcome'> = new client.Histogram({
    name: 'gateway_upstream_duration_seconds',
    help: 'Upstream call time by API (listing slug) and outcome (ok, error).',
    labelNames: ['api', 'outcome'],
    buckets: LATENCY_BUCKETS,
    registers: this.registers,
  });
  readonly upstreamErrors: Counter<'api' | 'reason'> = new client.Counter({
    name: 'gateway_upstream_errors_total',
    help: 'Upstream failures by API and reason (timeout, connect, status, size, reset, rate_limited).',
    labelNames: ['api', 'reason'],
    registers: this.registers,
  });
  readonly drainLag: Histogram = new client.Histogram({
    name: 'usage_drain_lag_seconds',
    help: 'Time from a call being settled in Redis to its usage row and ledger debit committed in Postgres.',
    buckets: LATENCY_BUCKETS,
    registers: this.registers,
  });
  readonly drainBooked: Counter<'outcome'> = new client.Counter({
    name: 'usage_drain_booked_total',
    help: 'Calls the usage drain booked in Postgres, by outcome (success, failed).',
    labelNames: ['outcome'],
    registers: this.registers,
  });
  readonly activities: Counter<'activity' | 'outcome'> = new client.Counter({
    name: 'temporal_activity_outcomes_total',
    help: 'Temporal activity executions in this worker, by activity type and outcome (completed, failed).',
    labelNames: ['activity', 'outcome'],
    registers: this.registers,
  });
  readonly healthUp: Gauge<'component' | 'backend'> = new client.Gauge({
    name: 'health_component_up',
    help: 'Last health check of a component this process depends on (db, counters, temporal): 1 up, 0 down.',
    labelNames: ['component', 'backend'],
    registers: this.registers,
  });
  private defaultsOn = false;

  /** Process metrics (memory, event-loop delay, GC, handles): once, by the process that serves the metrics. */
  collectProcessMetrics(): void {
    if (this.defaultsOn) return;
    this.defaultsOn = true;
    client.collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 20 });
  }

  /** Open reservations of this gateway process and the oldest one's age, read at scrape time. */
  watchReservations(view: () => ReservationsView): void {
    new client.Gauge({
      name: 'gateway_reservations_open',
      help: 'Reservations this gateway holds for calls in flight (admitted, not yet settled or voided).',
      registers: [this.registry],
      collect() {
        this.set(view().open);
      },
    });
    new client.Gauge({
      name: 'gateway_reservation_oldest_age_seconds',
      help: 'Age of the oldest reservation this gateway holds (a stuck call shows here before the sweeper acts).',
      registers: [this.registry],
      collect() {
        this.set(view().oldestAgeSeconds);
      },
    });
  }

  /** Calls settled by this process and not yet acknowledged as booked in Postgres. */
  watchDrainBacklog(pending: () => number): void {
    new client.Gauge({
      name: 'usage_drain_pending',
      help: 'Settled calls this process has handed to the usage drain that Postgres has not booked yet.',
      registers: [this.registry],
      collect() {
        this.set(pending());
      },
    });
  }

  /** Orgs whose cached balance differs from their ledger sum (the books check), refreshed at most every `ttlMs`. */
  watchLedgerDrift(drifted: () => Promise<number>, ttlMs = 60_000): void {
    let cached: { at: number; value: number } | undefined;
    new client.Gauge({
      name: 'ledger_drift_orgs',
      help: 'Orgs whose cached balance does not equal the sum of their ledger rows (must be 0).',
      registers: [this.registry],
      async collect() {
        if (!cached || Date.now() - cached.at > ttlMs) {
          cached = { at: Date.now(), value: await drifted() };
        }
        this.set(cached.value);
      },
    });
  }

  async exposition(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
