// The gateway process's own CPU per call, for A/B comparisons on a busy machine: `npx tsx bench/gateway/cpu-per-call.ts
// [row] [windows] [seconds]` starts the nginx upstream and the gateway as the benchmark does, then runs `windows` wrk
// capacity runs (-t1 -c16) on the row and prints, for each, the gateway process's utime+stime (from /proc, its
// descendants included) divided by the requests wrk completed, and the median. Redis and Postgres are not counted:
// on a shared machine their processes serve other work too.
import { CLK_TCK, snapshot, withDescendants } from './cpu.js';
import { startGatewayTargets } from './gateway-targets.js';
import { startUpstream } from './nginx.js';
import { stopAllChildren } from './proc.js';
import { runWrk } from './wrk.js';

const row = process.argv[2] ?? 'gateway_paid';
const windows = Number(process.argv[3] ?? 3);
const seconds = Number(process.argv[4] ?? 5);

function processCpuUs(roots: readonly number[]): number {
  const snap = snapshot();
  let ticks = 0;
  for (const pid of withDescendants(snap, roots)) {
    ticks += snap.procs.get(pid)?.ticks ?? 0;
  }
  return (ticks / CLK_TCK) * 1e6;
}

const upstream = await startUpstream();
const gateway = await startGatewayTargets({ upstreamUrl: upstream.url });
try {
  const target = gateway?.targets.find((t) => t.name === row);
  if (!target) throw new Error(`no target ${row}`);
  await runWrk(target, { durationS: 2, connections: 16, threads: 1 });
  const results: number[] = [];
  for (let w = 0; w < windows; w++) {
    const before = processCpuUs(target.pids());
    const out = await runWrk(target, { durationS: seconds, connections: 16, threads: 1 });
    const used = processCpuUs(target.pids()) - before;
    const perCall = used / out.requests;
    results.push(perCall);
    console.log(
      `${row} window ${w + 1}: ${out.requests} requests, ${out.requestsPerSec.toFixed(0)} req/s, ` +
        `${perCall.toFixed(1)} gateway CPU-µs per call (non-2xx ${out.non2xx})`,
    );
  }
  results.sort((a, b) => a - b);
  console.log(`${row} median gateway CPU-µs per call: ${results[Math.floor(results.length / 2)]!.toFixed(1)}`);
} finally {
  await gateway?.stop();
  await stopAllChildren();
}
