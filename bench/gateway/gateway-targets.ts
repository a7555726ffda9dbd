// PLACEHOLDER: the gateway's rows of the benchmark (gateway_paid, gateway_429, gateway_replay).
//
// The gateway's hot path is being built; until it is, this returns null and the harness measures only the reference
// rows (direct, nginx_proxy, bare_node_proxy), reporting the gateway rows as "not measured". To fill it in:
//
// - Start the gateway as its own node process (e.g. spawn process.execPath with nodeTsArgs('<repo>/scripts/start.ts')
//   and 'gateway', or its entry file, via startChild from ./proc.js so Ctrl-C stops it too), against real Postgres
//   and Redis (DATABASE_URL, REDIS_URL), configured as in production (log level too). The CPU accounting charges
//   every `postgres` and `redis-server` process on the machine to each row, unless servicePids() names the
//   postmaster and redis-server the gateway uses (do that when they are dedicated to the run). Don't run the gateway
//   inside this (orchestrator) process: pids() has to name a process that does nothing but serve the gateway.
// - Seed what each row needs: a provider API whose base URL is ctx.upstreamUrl (the nginx upstream answers 200 with
//   a ~100-byte JSON body on every path and method), a paid endpoint, a consumer key with enough credit for the whole
//   run and no rate limit the paid row would hit (each round sends req/s × BENCH_DURATION_S calls at full speed, plus
//   BENCH_RATE × (BENCH_LATENCY_DURATION_S + 1) at the fixed rate, plus the warm-up: size it for 10× the bare proxy's
//   throughput), and a key (or endpoint) that is over a rate limit low enough that nothing gets through during the
//   whole run (a refill shows up as unexpected 200s and skews the 429 row).
// - Return targets named with TARGET.gatewayPaid / gateway429 / gatewayReplay (from ./types.js):
//     gateway_paid:   paid endpoint, Authorization: Bearer <key>, no Idempotency-Key (every call is billed);
//     gateway_429:    expectedStatus: 429, a key that is over its rate limit;
//     gateway_replay: a fixed Idempotency-Key, primed with one call before returning, so every call is a replay.
//   pids() returns the gateway's pid (descendants are added automatically).
// - verify(traffic) runs after all measurements. traffic[name] says how many responses each row saw with the
//   expected status, and how many more may have reached the gateway unseen (maybeInFlight: wrk stops with requests
//   in flight). Check that usage rows for the paid key lie in [expected, expected + maybeInFlight] of gateway_paid
//   (the harness's one probe call per row is included in the counts; a priming call you make yourself is not), that
//   429s and replays wrote no usage, and that no balance or key cap went below zero (nothing overspent).
//   Return { ok, details } with the counts; ok: false makes the run exit 1.
// - stop() stops the gateway and removes what was seeded (or the whole throw-away database).
import type { GatewayTargets } from './types.js';

export interface GatewayTargetsContext {
  /** Base URL of the nginx upstream, e.g. http://127.0.0.1:41234 (no trailing slash). */
  upstreamUrl: string;
}

// eslint-disable-next-line @typescript-eslint/require-await -- async on purpose: the real version awaits start-up.
export async function startGatewayTargets(_ctx: GatewayTargetsContext): Promise<GatewayTargets | null> {
  return null;
}
