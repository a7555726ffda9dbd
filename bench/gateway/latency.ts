// Latency at a fixed request rate (500 req/s by default), measured by an open-loop generator in its own process.
//
// Why not autocannon's `overallRate` for the targets: autocannon 8 records latencies in an integer HDR histogram
// with a lowest discernible value of 1 ms (so 0.4 ms and 0.9 ms both count as 0), sends each connection's per-second
// quota as a burst at the start of every second (queueing its own requests), and with a rate set it back-fills
// synthetic samples at 1 ms intervals for coordinated omission. Measured against a trivial node:http server:
// p50 1 ms, p99 26 ms, max 32 ms, 2212 samples for 1501 requests. The targets here are 1 ms (p50) and 5 ms (p99) of
// *added* latency, so we need microsecond resolution and an even schedule: latency-worker.ts sends request i at
// start + i/rate (open loop: it never waits for responses), times each with process.hrtime.bigint() and keeps every
// sample, so the percentiles are exact.
//
// autocannon still runs after this, at the same rate, as a reported cross-check that no target uses (autocannon.ts).
//
// The worker runs in its own process so its event loop and GC never share a core's time slice with the orchestrator,
// and it reports its own CPU (process.cpuUsage) so it can be shown and left out of the totals.
import { fileURLToPath } from 'node:url';
import { chargedUs, cpuWindow, snapshot, type CpuGroups, type ProcSnapshot } from './cpu.js';
import { nodeTsArgs, startChild } from './proc.js';
import { workerRequest, type BenchTarget, type LatencyResult, type TrafficCount, type WorkerRequest } from './types.js';

export interface LatencyWorkerConfig extends WorkerRequest {
  rate: number;
  warmupS: number;
  durationS: number;
}

export interface PhaseCounts {
  statuses: Record<string, number>;
  errors: number;
}

export interface WorkerResult {
  rate: number;
  achievedRate: number;
  measured: PhaseCounts;
  warmup: PhaseCounts;
  latencyMs: LatencyResult['latencyMs'];
  scheduleLatencyMs: LatencyResult['scheduleLatencyMs'];
  /** The worker's own CPU over the measured phase. */
  cpuUs: number;
}

/** Worker -> orchestrator. 'ready': warm-up done, waiting for 'go' (so the CPU snapshot brackets only the run). */
export type WorkerMessage = { type: 'ready' } | { type: 'done'; result: WorkerResult };
/** Orchestrator -> worker. */
export type OrchestratorMessage = { type: 'go' };

export interface LatencyOptions {
  rate: number;
  warmupS: number;
  durationS: number;
}

const countsToTraffic = (counts: PhaseCounts, expectedStatus: number): TrafficCount => {
  let expected = 0;
  let unexpected = 0;
  for (const [status, n] of Object.entries(counts.statuses)) {
    if (Number(status) === expectedStatus) expected += n;
    else unexpected += n;
  }
  // The worker waits for every response before it reports, so nothing is left in flight.
  return { expected, unexpected, errors: counts.errors, maybeInFlight: 0 };
};

export async function runLatency(
  target: BenchTarget,
  options: LatencyOptions,
  groups: CpuGroups,
): Promise<{ result: LatencyResult; traffic: TrafficCount[] }> {
  const config: LatencyWorkerConfig = {
    ...workerRequest(target),
    rate: options.rate,
    warmupS: options.warmupS,
    durationS: options.durationS,
  };
  const script = fileURLToPath(new URL('./latency-worker.ts', import.meta.url));
  const worker = startChild('latency-worker', process.execPath, [...nodeTsArgs(script), JSON.stringify(config)], {
    ipc: true,
    env: { ...process.env, NODE_ENV: 'production' },
  });

  let before: ProcSnapshot | null = null;
  let after: ProcSnapshot | null = null;
  let workerResult: WorkerResult | null = null;
  worker.child.on('message', (message: WorkerMessage) => {
    if (message.type === 'ready') {
      before = snapshot();
      const go: OrchestratorMessage = { type: 'go' };
      worker.child.send(go);
    } else {
      after = snapshot();
      workerResult = message.result;
    }
  });
  const code = await worker.exited;
  if (code !== 0 || !workerResult || !before || !after) {
    throw new Error(`latency worker failed (${code}) on ${target.name}:\n${worker.tail()}`);
  }
  const res: WorkerResult = workerResult;
  const expectedStatus = target.expectedStatus ?? 200;
  const measured = countsToTraffic(res.measured, expectedStatus);
  const requests = measured.expected + measured.unexpected;
  const cpuUs = cpuWindow(before, after, groups, res.cpuUs);
  return {
    result: {
      rate: res.rate,
      achievedRate: res.achievedRate,
      requests,
      statuses: res.measured.statuses,
      unexpected: measured.unexpected,
      errors: measured.errors,
      latencyMs: res.latencyMs,
      scheduleLatencyMs: res.scheduleLatencyMs,
      cpuUs,
      cpuUsPerRequest: requests > 0 ? chargedUs(cpuUs) / requests : Number.NaN,
    },
    traffic: [countsToTraffic(res.warmup, expectedStatus), measured],
  };
}
