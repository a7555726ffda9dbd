// Shared shapes of the gateway benchmark: what a target is, what one measurement yields, and what the run reports.

/** Row names. The gateway rows are supplied by gateway-targets.ts under exactly these names. */
export const TARGET = {
  direct: 'direct',
  nginx: 'nginx_proxy',
  bare: 'bare_node_proxy',
  gatewayPaid: 'gateway_paid',
  gateway429: 'gateway_429',
  gatewayReplay: 'gateway_replay',
} as const;

/** One thing the load generators hit. The reference rows and the gateway rows use the same shape. */
export interface BenchTarget {
  /** Row key in the results, e.g. 'bare_node_proxy' or 'gateway_paid' (see TARGET). */
  name: string;
  /** Absolute http:// URL, including the path the generator requests. */
  url: string;
  /** Defaults to GET. */
  method?: 'GET' | 'POST';
  /** Request body for POST (sent with every request). */
  body?: string;
  /** Sent with every request, e.g. Authorization and Idempotency-Key. */
  headers?: Record<string, string>;
  /** The status every response should have: 200 unless set (gateway_429 expects 429). */
  expectedStatus?: number;
  /**
   * Processes whose CPU time is charged to this row (their descendants are included automatically).
   * The proxy under test: nginx's master, the bare proxy's node process, the gateway's node process.
   * Empty for the direct row, where nothing sits between the client and the upstream.
   */
  pids(): number[];
}

/** CPU time spent during one measurement window, in microseconds. */
export interface CpuWindow {
  /** The processes of the target (BenchTarget.pids and their descendants). */
  target: number;
  /** Every redis-server process on the machine (or the gateway's, see GatewayTargets.servicePids). */
  redis: number;
  /** Every postgres process (postmaster, backends, backends that exited in the window), or the gateway's. */
  postgres: number;
  /** The upstream nginx: common to every row, reported but never part of a total. */
  upstream: number;
  /** The load generator (wrk or the latency worker): reported, never part of a total. */
  loadgen: number;
  /**
   * Everything else the machine did in the window (the rest of /proc/stat's busy time, approximate): other work on
   * the machine competing for the cores. Large values mean the figures of that run are suspect.
   */
  other: number;
}

export interface CapacityResult {
  requestsPerSec: number;
  requests: number;
  durationS: number;
  /** Responses whose status was not the expected one (wrk only distinguishes 2xx/3xx from the rest). */
  unexpected: number;
  socketErrors: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  cpuUs: CpuWindow;
  /** (target + redis + postgres) CPU-µs per completed request: the figure the ≤ 300 µs target is about. */
  cpuUsPerRequest: number;
  cpuUsPerRequestByPart: CpuWindow;
}

export interface LatencyResult {
  /** Requested open-loop rate. */
  rate: number;
  /** Requests actually sent per second over the measured window (should equal `rate`). */
  achievedRate: number;
  requests: number;
  /** Status code -> count, over the measured window. */
  statuses: Record<string, number>;
  unexpected: number;
  errors: number;
  /** From the moment the request was handed to the connection pool to the last byte of the response. */
  latencyMs: { p50: number; p90: number; p99: number; p999: number; max: number };
  /** From the moment the schedule said the request was due: adds the generator's timer lateness (≈1 ms). */
  scheduleLatencyMs: { p50: number; p90: number; p99: number; max: number };
  cpuUs: CpuWindow;
  cpuUsPerRequest: number;
}

/** Every request a target received during the run, for the books check (usage rows = successful responses). */
export interface TrafficCount {
  /** Responses the generators saw with the expected status (for gateway_paid: successful, billable calls). */
  expected: number;
  /** Responses with any other status. */
  unexpected: number;
  /** Requests that failed without a response (socket errors, timeouts). */
  errors: number;
  /**
   * Requests that may have reached the server without the generator seeing the response: wrk stops with up to
   * `connections` requests in flight, and a timed-out request may still be served. So a server-side count of
   * successful calls should lie in [expected, expected + maybeInFlight].
   */
  maybeInFlight: number;
}

export interface VerifyResult {
  ok: boolean;
  details: Record<string, unknown>;
}

/** What bench/gateway/gateway-targets.ts provides when the gateway can be benchmarked. */
export interface GatewayTargets {
  /** gateway_paid, gateway_429 and gateway_replay (any subset; missing rows are reported as not measured). */
  targets: BenchTarget[];
  /**
   * Optional: the root pids of the Redis server and the Postgres postmaster the gateway uses (backends are its
   * descendants). Without it every redis-server and postgres process on the machine is charged to every row, which
   * is right on a dedicated machine and noisy on a shared one (other test suites using the same services).
   */
  servicePids?(): { redis: number[]; postgres: number[] };
  /** Called once after all measurements, with the traffic every target received. */
  verify(traffic: Record<string, TrafficCount>): Promise<VerifyResult>;
  stop(): Promise<void>;
}
