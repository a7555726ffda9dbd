// One capacity measurement: wrk against a target, bracketed by /proc snapshots for the CPU accounting.
import { chargedUs, cpuWindow, perRequest, snapshot, type CpuGroups } from './cpu.js';
import type { BenchTarget, CapacityResult, TrafficCount } from './types.js';
import { runWrk, type WrkOptions } from './wrk.js';

const isSuccess = (status: number): boolean => status >= 200 && status < 400;

export async function runCapacity(
  target: BenchTarget,
  options: WrkOptions,
  groups: CpuGroups,
): Promise<{ result: CapacityResult; traffic: TrafficCount }> {
  const before = snapshot();
  const wrk = await runWrk(target, options);
  const after = snapshot();
  const cpuUs = cpuWindow(before, after, groups, wrk.cpuUs);
  const errors = wrk.socketErrors.connect + wrk.socketErrors.read + wrk.socketErrors.write + wrk.socketErrors.timeout;
  // wrk only tells "2xx/3xx" from "anything else". For a target that should answer 429, every "anything else" is
  // taken as a 429; the latency runs, which count exact statuses, catch it when that is not so.
  const expectsSuccess = isSuccess(target.expectedStatus ?? 200);
  const expected = expectsSuccess ? wrk.requests - wrk.non2xx : wrk.non2xx;
  const unexpected = wrk.requests - expected;
  return {
    result: {
      requestsPerSec: wrk.requestsPerSec,
      requests: wrk.requests,
      durationS: wrk.durationS,
      unexpected,
      socketErrors: errors,
      latencyMs: wrk.latencyMs,
      cpuUs,
      cpuUsPerRequest: wrk.requests > 0 ? chargedUs(cpuUs) / wrk.requests : Number.NaN,
      cpuUsPerRequestByPart: perRequest(cpuUs, wrk.requests),
    },
    traffic: {
      expected,
      unexpected,
      errors,
      // wrk stops with up to one request per connection in flight; timed-out requests may still be served.
      maybeInFlight: options.connections + wrk.socketErrors.timeout,
    },
  };
}
