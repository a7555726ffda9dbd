// Profile one gateway row on its own: `BENCH_GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/gateway-profile"
// npx tsx bench/gateway/profile.ts <row>`, row one of gateway_paid, gateway_free, gateway_429, gateway_replay,
// gateway_paid_scale, gateway_first_calls. It starts the nginx upstream and the gateway (as the benchmark does), drives
// the row with wrk -t1 for 8 s over 32 connections (PROFILE_SECONDS, PROFILE_CONNECTIONS), prints wrk's report and
// the store operations per call, and stops; the gateway writes its V8 CPU profile on exit (open it in Chrome DevTools
// or speedscope). gateway_paid_scale first seeds 100k keys and 10k listings and warms its 1,000 keys for 8 s;
// gateway_first_calls seeds the same and calls filler keys never called before, one call each (a key's first call).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { scaleScript, seedScale, sweepScript } from './extended.js';
import { startGatewayTargets } from './gateway-targets.js';
import { startUpstream } from './nginx.js';
import { findBinary, stopAllChildren } from './proc.js';
import { perCall, readCounters, readCountersSettled } from './store-ops.js';

const row = process.argv[2] ?? 'gateway_paid';
const seconds = Number(process.env.PROFILE_SECONDS ?? 8);
/** wrk's connections in the measured run (PROFILE_CONNECTIONS; 32 as the benchmark). */
const connections = Number(process.env.PROFILE_CONNECTIONS ?? 32);
const upstream = await startUpstream();
const gateway = await startGatewayTargets({ upstreamUrl: upstream.url });
try {
  const internals = gateway!.extended!;
  let args: string[];
  if (row === 'gateway_first_calls') {
    const seed = await seedScale(internals);
    const dir = mkdtempSync(join(tmpdir(), 'profile-wrk-'));
    writeFileSync(join(dir, 'sweep.lua'), sweepScript(seed.slugs, 1, seed.fillers));
    args = ['-s', join(dir, 'sweep.lua'), `${internals.gatewayBase}/`];
  } else if (row === 'gateway_paid_scale') {
    const seed = await seedScale(internals);
    const dir = mkdtempSync(join(tmpdir(), 'profile-wrk-'));
    writeFileSync(join(dir, 'scale.lua'), scaleScript(seed));
    args = ['-s', join(dir, 'scale.lua'), `${internals.gatewayBase}/`];
    // Warm-up: every key and API touched before the measured run.
    execFileSync(findBinary('wrk'), ['-t1', '-c32', `-d${seconds}s`, ...args], { encoding: 'utf8' });
  } else {
    const target = gateway?.targets.find((t) => t.name === row);
    if (!target) throw new Error(`no target ${row}`);
    args = [...Object.entries(target.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), target.url];
  }
  const before = await readCounters(internals.redisUrl, internals.databaseUrl);
  const out = execFileSync(findBinary('wrk'), ['-t1', `-c${connections}`, `-d${seconds}s`, ...args], {
    encoding: 'utf8',
  });
  console.log(out);
  const after = await readCountersSettled(internals.redisUrl, internals.databaseUrl);
  const calls = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  console.log('store operations per call:', JSON.stringify(perCall(before, after, calls)));
  // Which updates were HOT (no index touched): the write path's per-row cost (docs/durability.md, "The write path").
  const db = new pg.Client({ connectionString: internals.databaseUrl });
  await db.connect();
  const hot = await db.query<{ relname: string; n_tup_upd: string; n_tup_hot_upd: string }>(
    'select relname, n_tup_upd, n_tup_hot_upd from pg_stat_user_tables where n_tup_upd > 0 order by n_tup_upd desc',
  );
  await db.end();
  console.log(
    'updates (HOT of all):',
    hot.rows.map((r) => `${r.relname} ${r.n_tup_hot_upd}/${r.n_tup_upd}`).join(', '),
  );
} finally {
  await gateway?.stop();
  await stopAllChildren();
}
