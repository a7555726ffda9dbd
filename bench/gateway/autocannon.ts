// The autocannon cross-check: autocannon 8 at the same fixed rate as the latency run, in its own process.
//
// The issue asks for latency at a fixed 500 req/s "with autocannon", so every row also gets an autocannon run
// (`overallRate`, one pool of `connections`). It is reported next to the open-loop generator's figures but no target
// uses it: autocannon's histogram has 1 ms resolution, each connection sends its per-second quota as a burst, and it
// back-fills samples for coordinated omission (see latency.ts). What it does add is an independent client (its own
// HTTP parser, its own connections) agreeing, or not, on the order of magnitude.
//
// Like latency-worker.ts, autocannon-worker.ts runs in its own process so its event loop, GC and CPU never share the
// orchestrator's, and the orchestrator stays idle while it runs.
import { fileURLToPath } from 'node:url';
import { nodeTsArgs, startChild } from './proc.js';
import {
  workerRequest,
  type AutocannonResult,
  type BenchTarget,
  type TrafficCount,
  type WorkerRequest,
} from './types.js';

export interface AutocannonWorkerConfig extends WorkerRequest {
  rate: number;
  connections: number;
  durationS: number;
  expectedStatus: number;
}

/** Worker -> orchestrator, once, before it exits. */
export type AutocannonWorkerMessage = { type: 'done'; result: AutocannonResult };

export interface AutocannonOptions {
  rate: number;
  connections: number;
  durationS: number;
}

export async function runAutocannon(
  target: BenchTarget,
  options: AutocannonOptions,
): Promise<{ result: AutocannonResult; traffic: TrafficCount }> {
  const config: AutocannonWorkerConfig = {
    ...workerRequest(target),
    rate: options.rate,
    connections: options.connections,
    durationS: options.durationS,
    expectedStatus: target.expectedStatus ?? 200,
  };
  const script = fileURLToPath(new URL('./autocannon-worker.ts', import.meta.url));
  const worker = startChild('autocannon-worker', process.execPath, [...nodeTsArgs(script), JSON.stringify(config)], {
    ipc: true,
    env: { ...process.env, NODE_ENV: 'production' },
  });
  let result: AutocannonResult | null = null;
  worker.child.on('message', (message: AutocannonWorkerMessage) => {
    if (message.type === 'done') result = message.result;
  });
  const code = await worker.exited;
  if (code !== 0 || !result) {
    throw new Error(`autocannon worker failed (${code}) on ${target.name}:\n${worker.tail()}`);
  }
  const res: AutocannonResult = result;
  return {
    result: res,
    traffic: {
      expected: res.responses - res.unexpected,
      unexpected: res.unexpected,
      errors: res.errors,
      // Every request written whose response autocannon did not deliver: in flight when it stopped (it closes its
      // connections without waiting), timed out, or on a connection that broke. Any of them may have been served.
      maybeInFlight: Math.max(0, res.requestsSent - res.responses),
    },
  };
}
