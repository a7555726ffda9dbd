// Shared shapes of the gateway benchmark: what a target is, what one measurement yields, and what the run reports.

/** Row names. The gateway rows are supplied by gateway-targets.ts under exactly these names. */
export const TARGET = {
  direct: 'direct',
  nginx: 'nginx_proxy',
  bare: 'bare_node_proxy',
  /**
   * The floor of a metered Node gateway under the durability contract (floor-proxy.ts): the bare proxy plus only the
   * unavoidable work (key hash, in-memory admission, one Redis script per batch before the answer, one Postgres row
   * per call after it). Runs on the gateway's own Redis and database; shown for "what would it take".
   */
  floor: 'floor_node_gateway',
  gatewayPaid: 'gateway_paid',
  gateway429: 'gateway_429',
  gatewayReplay: 'gateway_replay',
  /** A free (0-cent) endpoint of the same listing: authenticated, limited and recorded, never charged. */
  gatewayFree: 'gateway_free',
  /** The same calls on the all-in-one `npm start` (allinone.ts). */
  allinonePaid: 'allinone_paid',
  allinoneFree: 'allinone_free',
  allinoneReplay: 'allinone_replay',
  /** The same on `npm start` pointed at real Postgres and Redis (DATABASE_URL, REDIS_URL; allinone.ts). */
  allinonePgPaid: 'allinone_pg_redis_paid',
  allinonePgFree: 'allinone_pg_redis_free',
  allinonePgReplay: 'allinone_pg_redis_replay',
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
   * wrk only: a Lua script that builds each request itself (the scale row spreads calls over many keys and APIs);
   * `url` then only names the host. The latency and autocannon runs do not support it.
   */
  wrkScript?: string;
  /**
   * Processes whose CPU time is charged to this row (their descendants are included automatically).
   * The proxy under test: nginx's master, the bare proxy's node process, the gateway's node process.
   * Empty for the direct row, where nothing sits between the client and the upstream.
   */
  pids(): number[];
  /**
   * The Redis and Postgres processes charged to this row, when not the gateway's (GatewayTargets.servicePids): the
   * all-in-one has its stores inside its own process, so it names none.
   */
  services?(): { redis: number[]; postgres: number[] };
}

/** The request a worker process sends again and again: a target with its defaults filled in. */
export interface WorkerRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: string | null;
}

export const workerRequest = (target: BenchTarget): WorkerRequest => ({
  url: target.url,
  method: target.method ?? 'GET',
  headers: target.headers ?? {},
  body: target.body ?? null,
});

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

/**
 * The autocannon cross-check at the same fixed rate (autocannon.ts). Not used by any target: its latency histogram
 * has 1 ms resolution, each connection sends its per-second quota in a burst, and it back-fills samples for
 * coordinated omission.
 */
export interface AutocannonResult {
  /** `overallRate` given to autocannon, req/s. */
  rate: number;
  connections: number;
  /** Seconds, as autocannon measured them (it stops on its 1 s sampling tick after `duration`). */
  durationS: number;
  /** Requests written to a socket, counted per connection by autocannon-worker.ts. */
  requestsSent: number;
  /**
   * autocannon's own `requests.sent`. It over-counts with a rate set (it adds each connection's per-second quota at
   * start-up), so the traffic uses `requestsSent`; kept to show the difference.
   */
  autocannonRequestsSent: number;
  /** Responses autocannon saw (any status). */
  responses: number;
  /** Status code -> count. */
  statuses: Record<string, number>;
  /** autocannon's non-2xx count (for gateway_429 that is every 429). */
  non2xx: number;
  /** Responses whose status is not the row's expected one. */
  unexpected: number;
  /** Body mismatches (autocannon's `mismatches`; 0, no expected body is set). */
  mismatches: number;
  /** autocannon's `errors`: connection errors plus timeouts. */
  errors: number;
  timeouts: number;
  /** Samples in autocannon's histogram: more than `responses` when it back-filled for coordinated omission. */
  latencySamples: number;
  /** autocannon's `latency.p50` etc.: integer milliseconds (1 ms resolution). */
  latencyMs: { p50: number; p90: number; p99: number; max: number };
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
   * Requests that may have reached the server without the generator seeing the response: wrk and autocannon stop
   * with up to `connections` requests in flight, and a timed-out request (or one on a connection that broke) may
   * still be served. So a server-side count of successful calls should lie in [expected, expected + maybeInFlight].
   */
  maybeInFlight: number;
}

export interface VerifyResult {
  ok: boolean;
  details: Record<string, unknown>;
}

/** What bench/gateway/gateway-targets.ts provides when the gateway can be benchmarked. */
export interface GatewayTargets {
  /** gateway_paid, gateway_free, gateway_429, gateway_replay (any subset; missing rows are reported as not measured). */
  targets: BenchTarget[];
  /**
   * Optional: the root pids of the Redis server and the Postgres postmaster the gateway uses (backends are its
   * descendants). Without it every redis-server and postgres process on the machine is charged to every row, which
   * is right on a dedicated machine and noisy on a shared one (other test suites using the same services).
   */
  servicePids?(): { redis: number[]; postgres: number[] };
  /** What the extended rows (extended.ts: scale, memory, drain, processes) need to reach the gateway's state. */
  extended?: GatewayInternals;
  /** Called once after all measurements, with the traffic every target received. */
  verify(traffic: Record<string, TrafficCount>): Promise<VerifyResult>;
  stop(): Promise<void>;
}

export interface GatewayInternals {
  databaseUrl: string;
  /** The gateway's Redis key prefix (REDIS_KEY_PREFIX) and a Redis URL. */
  redisUrl: string;
  redisPrefix: string;
  upstreamUrl: string;
  /** The gateway process (scripts/start.ts gateway). */
  gatewayPid: number;
  /** Where the gateway writes a heap snapshot when sent SIGUSR2 (`--heapsnapshot-signal`). */
  heapSnapshotDir: string;
  gatewayBase: string;
  /** The paid row's key and its id (the drain row's lag probes use it, so the books check counts them). */
  paidKey: string;
  paidKeyId: string;
  /** Start another gateway (`--processes n`) on the same database and Redis; stopped with the rest. */
  startGateway(processes: number): Promise<{ base: string; pid: number }>;
}
