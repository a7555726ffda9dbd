// Profile one gateway row on its own: `BENCH_GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/gateway-profile"
// npx tsx bench/gateway/profile.ts [gateway_paid|gateway_429|gateway_replay]` starts the nginx upstream and the
// gateway (as the benchmark does), drives the row with wrk -t1 -c32 for 8 s, prints wrk's report and stops; the
// gateway writes its V8 CPU profile on exit (open it in Chrome DevTools or speedscope).
import { execFileSync } from 'node:child_process';
import { startGatewayTargets } from './gateway-targets.js';
import { startUpstream } from './nginx.js';
import { findBinary, stopAllChildren } from './proc.js';
import { perCall, readCounters, readCountersSettled } from './store-ops.js';

const row = process.argv[2] ?? 'gateway_paid';
const upstream = await startUpstream();
const gateway = await startGatewayTargets({ upstreamUrl: upstream.url });
try {
  const target = gateway?.targets.find((t) => t.name === row);
  if (!target) throw new Error(`no target ${row}`);
  const headers = Object.entries(target.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  const internals = gateway!.extended!;
  const before = await readCounters(internals.redisUrl, internals.databaseUrl);
  const out = execFileSync(findBinary('wrk'), ['-t1', '-c32', '-d8s', ...headers, target.url], { encoding: 'utf8' });
  console.log(out);
  const after = await readCountersSettled(internals.redisUrl, internals.databaseUrl);
  const calls = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  console.log('store operations per call:', JSON.stringify(perCall(before, after, calls)));
} finally {
  await gateway?.stop();
  await stopAllChildren();
}
