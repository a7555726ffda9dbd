// The gateway benchmark (npm run bench:gateway). See bench/README.md for what each row means and the knobs.
//
// One run: start the nginx upstream, the nginx reverse proxy, the bare Node proxy, (when gateway-targets.ts
// provides them) the gateway rows and (unless BENCH_SKIP_ALLINONE=1) the all-in-one `npm start` rows; probe and warm up every row; then for each round and row, a wrk capacity run
// and an open-loop latency run at a fixed rate, with CPU from /proc around each, and an autocannon run at the same
// rate as a cross-check (reported, never used by a target). Medians across rounds, ratios, targets, the books check
// (verify), and the results written to bench/results/gateway-<date>.{json,md}.
//
// Exit status: 1 when the run breaks or the books check fails; missed performance targets are reported, not fatal.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { runAutocannon } from './autocannon.js';
import { startBareProxy } from './bare.js';
import { runCapacity } from './capacity.js';
import type { CpuGroups } from './cpu.js';
import { renderExtended, runDrain, runScaleAndMemory, type ExtendedResults } from './extended.js';
import { startAllInOne, type AllInOne } from './allinone.js';
import { startGatewayTargets } from './gateway-targets.js';
import { runLatency } from './latency.js';
import { machineInfo } from './machine.js';
import { startNginxProxy, startUpstream } from './nginx.js';
import { findBinary, signalAllChildrenNow, stopAllChildren } from './proc.js';
import { STALLS_PATH } from './proxy-process.js';
import { computeRatios, evaluateChecks, renderMarkdown, summarize, warnings, type Round } from './report.js';
import { median, round } from './stats.js';
import { TARGET, type BenchTarget, type GatewayTargets, type TrafficCount, type VerifyResult } from './types.js';
import type { WrkOptions } from './wrk.js';
import { medianStoreOps, perCall, readCounters, readCountersSettled, renderStoreOps } from './store-ops.js';

/** The floor proxy's one valid key (floor-proxy.ts). */
const FLOOR_KEY = 'sk_floor_0123456789abcdef';
const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The path every row requests; the upstream answers any path, and the gateway rows bring their own. */
const PATH = '/v1/quote?symbol=ACME';
/** Pause between measurements, so one run's tail (closing connections, GC) does not land in the next. */
const SETTLE_MS = 500;
/** The autocannon cross-check's one connection pool (autocannon's default); `overallRate` is spread over it. */
const AUTOCANNON_CONNECTIONS = 10;

interface Config {
  rounds: number;
  durationS: number;
  latencyDurationS: number;
  warmupS: number;
  latencyWarmupS: number;
  rate: number;
  connections: number;
  autocannonDurationS: number;
  autocannonConnections: number;
  resultsDir: string;
  /** BENCH_PROCESSES=N (opt-in): the scale load also on a gateway with N processes. */
  processes: number;
  /** BENCH_SKIP_EXTENDED=1: no drain, scale or memory rows (the small setup only). */
  skipExtended: boolean;
  /** Seconds of the stall probe at the fixed rate (issue 32: 60). */
  stallProbeS: number;
}

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

function readConfig(): Config {
  return {
    rounds: positiveInt('BENCH_ROUNDS', 3),
    durationS: positiveInt('BENCH_DURATION_S', 10),
    latencyDurationS: positiveInt('BENCH_LATENCY_DURATION_S', 10),
    warmupS: positiveInt('BENCH_WARMUP_S', 2),
    latencyWarmupS: positiveInt('BENCH_LATENCY_WARMUP_S', 1),
    rate: positiveInt('BENCH_RATE', 500),
    // The issue fixes wrk -t1 -c32; the knob exists for experiments, not for the recorded results.
    connections: positiveInt('BENCH_CONNECTIONS', 32),
    autocannonDurationS: positiveInt('BENCH_AUTOCANNON_DURATION_S', 5),
    autocannonConnections: AUTOCANNON_CONNECTIONS,
    resultsDir: process.env.BENCH_RESULTS_DIR || join(REPO_ROOT, 'bench', 'results'),
    processes: process.env.BENCH_PROCESSES ? positiveInt('BENCH_PROCESSES', 1) : 0,
    skipExtended: process.env.BENCH_SKIP_EXTENDED === '1',
    stallProbeS: positiveInt('BENCH_STALL_PROBE_S', 60),
  };
}

/** Header values are secrets (API keys); the results keep only their names. */
function describeTarget(target: BenchTarget): Record<string, unknown> {
  return {
    url: target.url,
    method: target.method ?? 'GET',
    expectedStatus: target.expectedStatus ?? 200,
    headers: Object.keys(target.headers ?? {}),
    hasBody: target.body !== undefined,
  };
}

/** One request per row before anything is measured: a misconfigured row fails loudly instead of measuring errors. */
async function probe(target: BenchTarget): Promise<void> {
  const res = await request(target.url, {
    method: target.method ?? 'GET',
    headers: target.headers,
    body: target.body,
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  const body = await res.body.text();
  const expected = target.expectedStatus ?? 200;
  if (res.statusCode !== expected) {
    throw new Error(`${target.name} answered ${res.statusCode} (expected ${expected}): ${body.slice(0, 300)}`);
  }
}

function addTraffic(ledger: Map<string, TrafficCount>, name: string, add: TrafficCount): void {
  const t = ledger.get(name) ?? { expected: 0, unexpected: 0, errors: 0, maybeInFlight: 0 };
  ledger.set(name, {
    expected: t.expected + add.expected,
    unexpected: t.unexpected + add.unexpected,
    errors: t.errors + add.errors,
    maybeInFlight: t.maybeInFlight + add.maybeInFlight,
  });
}

// ---- lifecycle: whatever happens, stop what we started ----

let gateway: GatewayTargets | null = null;
let allInOne: AllInOne | null = null;
/** The all-in-one on real Postgres and Redis (allinone.ts `pg_redis`). */
let allInOnePg: AllInOne | null = null;
let cleanup: Promise<void> | null = null;
/** Set on SIGINT/SIGTERM: the measurements then fail as their processes are stopped, which is not news. */
let interrupted = false;

function stopEverything(): Promise<void> {
  cleanup ??= (async () => {
    if (gateway) {
      await gateway.stop().catch((err: unknown) => console.error('gateway targets: stop failed:', err));
    }
    if (allInOne) await allInOne.stop().catch((err: unknown) => console.error('all-in-one: stop failed:', err));
    if (allInOnePg)
      await allInOnePg.stop().catch((err: unknown) => console.error('all-in-one (pg): stop failed:', err));
    await stopAllChildren();
  })();
  return cleanup;
}

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.on(signal, () => {
    interrupted = true;
    console.error(`\n${signal}: stopping nginx, the proxies and the load generators...`);
    void stopEverything().finally(() => process.exit(code));
  });
}
process.on('exit', signalAllChildrenNow);

// ---- the run ----

async function main(): Promise<number> {
  const config = readConfig();
  findBinary('nginx');
  findBinary('wrk');
  const startedAt = new Date();
  const date = startedAt.toISOString().slice(0, 10);
  const machine = machineInfo();
  console.log(
    `gateway bench: ${config.rounds} round(s), capacity ${config.durationS} s (wrk -t1 -c${config.connections}), ` +
      `latency ${config.latencyDurationS} s at ${config.rate} req/s, autocannon ${config.autocannonDurationS} s at ` +
      `${config.rate} req/s (-c${config.autocannonConnections}); ${machine.cpuModel} × ${machine.cores}, ` +
      `load ${machine.loadAverageAtStart.join(' ')}`,
  );

  const upstream = await startUpstream();
  const nginxProxy = await startNginxProxy(upstream.port);
  const bare = await startBareProxy(upstream.url);
  // The gateway's own process and the two all-in-ones start side by side (an all-in-one's Temporal dev server and
  // publish workflow take the longer); none is measured yet. BENCH_ROWS without an all-in-one's row leaves it out.
  const rowsAsked = (process.env.BENCH_ROWS ?? '').split(',').filter(Boolean);
  const wantPg = rowsAsked.length === 0 || rowsAsked.some((r) => r.startsWith('allinone_pg_redis'));
  const wantEmbedded = rowsAsked.length === 0 || rowsAsked.some((r) => /^allinone_(paid|free|replay)$/.test(r));
  const started = await Promise.allSettled([
    startGatewayTargets({ upstreamUrl: upstream.url }).then((g) => (gateway = g)),
    wantEmbedded ? startAllInOne(upstream.url).then((a) => (allInOne = a)) : Promise.resolve(null),
    wantPg ? startAllInOne(upstream.url, 'pg_redis').then((a) => (allInOnePg = a)) : Promise.resolve(null),
  ]);
  for (const s of started) if (s.status === 'rejected') throw s.reason;
  const internals = gateway?.extended;
  const floor = internals
    ? await startBareProxy(upstream.url, {
        name: 'floor-proxy',
        file: 'floor-proxy.ts',
        env: { FLOOR_REDIS_URL: internals.redisUrl, FLOOR_DATABASE_URL: internals.databaseUrl, FLOOR_KEY: FLOOR_KEY },
      })
    : null;

  const targets: BenchTarget[] = [
    { name: TARGET.direct, url: `${upstream.url}${PATH}`, pids: () => [] },
    { name: TARGET.nginx, url: `${nginxProxy.url}${PATH}`, pids: () => [nginxProxy.masterPid] },
    { name: TARGET.bare, url: `${bare.url}${PATH}`, pids: () => [bare.pid] },
    ...(floor
      ? [
          {
            name: TARGET.floor,
            url: `${floor.url}${PATH}`,
            headers: { authorization: `Bearer ${FLOOR_KEY}` },
            pids: () => [floor.pid],
          },
        ]
      : []),
    ...(gateway?.targets ?? []),
    ...(allInOne?.targets ?? []),
    ...(allInOnePg?.targets ?? []),
  ];
  // BENCH_ROWS=floor_node_gateway,gateway_paid (opt-in, for experiments): measure only these rows; the recorded run
  // measures every row.
  const only = (process.env.BENCH_ROWS ?? '').split(',').filter(Boolean);
  if (only.length > 0) targets.splice(0, targets.length, ...targets.filter((t) => only.includes(t.name)));
  const names = new Set(targets.map((t) => t.name));
  if (names.size !== targets.length) throw new Error(`duplicate target names: ${targets.map((t) => t.name).join()}`);
  console.log(gateway ? 'gateway targets: provided' : 'gateway targets: none (gateway-targets.ts returned null)');
  console.log(
    allInOne
      ? `all-in-one: npm start, pid ${allInOne.pid}`
      : 'all-in-one: not started (BENCH_SKIP_ALLINONE=1, or BENCH_ROWS without its rows)',
  );
  const pgStarted = allInOnePg;
  if (pgStarted) console.log(`all-in-one on Postgres and Redis: npm start, pid ${pgStarted.pid}`);

  const services = gateway?.servicePids?.() ?? null;
  const groups = (target: BenchTarget): CpuGroups => ({
    target: target.pids(),
    upstream: [upstream.masterPid],
    redis: target.services?.().redis ?? services?.redis ?? null,
    postgres: target.services?.().postgres ?? services?.postgres ?? null,
  });
  const wrkOptions = (durationS: number): WrkOptions => ({ durationS, connections: config.connections, threads: 1 });
  const traffic = new Map<string, TrafficCount>();

  for (const target of targets) {
    await probe(target);
    addTraffic(traffic, target.name, { expected: 1, unexpected: 0, errors: 0, maybeInFlight: 0 });
  }
  for (const target of targets) {
    // Warm-up: JIT, connection pools, caches. Counted in the traffic (the gateway bills it), never in results.
    const warm = await runCapacity(target, wrkOptions(config.warmupS), groups(target));
    addTraffic(traffic, target.name, warm.traffic);
    console.log(`warm-up ${target.name}: ${Math.round(warm.result.requestsPerSec)} req/s`);
    await sleep(SETTLE_MS);
  }

  const rounds = new Map<string, Round[]>(targets.map((t) => [t.name, []]));
  for (let r = 0; r < config.rounds; r++) {
    // Rotate the order each round so a slow drift of the machine does not always hit the same row.
    const order = targets.map((_, i) => targets[(i + r) % targets.length]).filter((t) => t !== undefined);
    for (const target of order) {
      // The gateway rows also count what each call costs the stores (store-ops.ts).
      const internals = target.name.startsWith('gateway') ? gateway?.extended : undefined;
      const before = internals ? await readCounters(internals.redisUrl, internals.databaseUrl) : null;
      const capacity = await runCapacity(target, wrkOptions(config.durationS), groups(target));
      addTraffic(traffic, target.name, capacity.traffic);
      const store =
        internals && before
          ? perCall(
              before,
              await readCountersSettled(internals.redisUrl, internals.databaseUrl),
              capacity.result.requests,
            )
          : undefined;
      await sleep(SETTLE_MS);
      const latency = await runLatency(
        target,
        { rate: config.rate, warmupS: config.latencyWarmupS, durationS: config.latencyDurationS },
        groups(target),
      );
      for (const t of latency.traffic) addTraffic(traffic, target.name, t);
      await sleep(SETTLE_MS);
      // The cross-check, after the measurements the targets use, so its traffic never overlaps theirs.
      const autocannon = await runAutocannon(target, {
        rate: config.rate,
        connections: config.autocannonConnections,
        durationS: config.autocannonDurationS,
      });
      addTraffic(traffic, target.name, autocannon.traffic);
      await sleep(SETTLE_MS);
      rounds.get(target.name)?.push({
        capacity: capacity.result,
        latency: latency.result,
        autocannon: autocannon.result,
        ...(store ? { store } : {}),
      });
      const c = capacity.result;
      const l = latency.result;
      const a = autocannon.result;
      console.log(
        `round ${r + 1}/${config.rounds} ${target.name.padEnd(16)} ${Math.round(c.requestsPerSec)} req/s, ` +
          `${round(c.cpuUsPerRequest, 1)} CPU-µs/req | at ${config.rate}/s p50 ${l.latencyMs.p50.toFixed(3)} ms, ` +
          `p99 ${l.latencyMs.p99.toFixed(3)} ms | autocannon p50 ${a.latencyMs.p50} ms, p99 ${a.latencyMs.p99} ms`,
      );
    }
  }

  // The extended rows, after the small setup's rounds: drain (on the small setup), then the 100k-key scale load.
  const extended: ExtendedResults = { drain: null, scale: null, memory: null, processes: null };
  const paidRounds = rounds.get(TARGET.gatewayPaid) ?? [];
  const small = paidRounds.length
    ? {
        requestsPerSec: median(paidRounds.map((r) => r.capacity.requestsPerSec)),
        cpuUsPerRequest: median(paidRounds.map((r) => r.capacity.cpuUsPerRequest)),
      }
    : null;
  const paidTarget = targets.find((t) => t.name === TARGET.gatewayPaid);
  if (gateway?.extended && paidTarget && !config.skipExtended) {
    const drain = await runDrain(gateway.extended, paidTarget, wrkOptions(config.durationS), groups(paidTarget));
    addTraffic(traffic, TARGET.gatewayPaid, drain.traffic);
    extended.drain = drain.result;
    console.log(
      `drain: ${Math.round(drain.result.rowsPerSec)} usage rows/s at ${Math.round(drain.result.requestsPerSec)} req/s, ` +
        `lag p50 ${drain.result.lagMs.p50.toFixed(1)} ms, p90 ${drain.result.lagMs.p90.toFixed(1)} ms`,
    );
    await sleep(SETTLE_MS);
    const scaled = await runScaleAndMemory(gateway.extended, {
      rounds: config.rounds,
      warmupS: Math.max(config.warmupS, 3),
      wrk: wrkOptions(config.durationS),
      groups,
      small,
      processes: config.processes,
      log: (line) => console.log(line),
    });
    Object.assign(extended, scaled);
  }

  // The stall probe (issue 32): the bare proxy and the all-in-one's paid row, each STALL_PROBE_S at the fixed rate,
  // event-loop stalls over 20 ms counted by each process itself (core/stall-monitor.ts) before and after.
  const stalls = { bare: null as number | null, allinone: null as number | null, allinonePg: null as number | null };
  const probeStalls = async (
    name: string,
    read: () => Promise<{ stalls: number; longGcs: number }>,
  ): Promise<number | null> => {
    const target = targets.find((t) => t.name === name);
    if (!target) return null;
    const before = await read();
    const probe = await runLatency(
      target,
      { rate: config.rate, warmupS: 1, durationS: config.stallProbeS },
      groups(target),
    );
    for (const t of probe.traffic) addTraffic(traffic, target.name, t);
    const after = await read();
    const count = after.stalls - before.stalls;
    console.log(
      `stalls over 20 ms, ${name}: ${count} in ${config.stallProbeS} s at ${config.rate} req/s ` +
        `(garbage collections over 20 ms: ${after.longGcs - before.longGcs}; p99 ${probe.result.latencyMs.p99} ms)`,
    );
    await sleep(SETTLE_MS);
    return count;
  };
  const anyAllInOne = allInOne ?? allInOnePg;
  if (anyAllInOne) {
    stalls.bare = await probeStalls(TARGET.bare, async () => {
      const res = await request(`${bare.url}${STALLS_PATH}`);
      const seen = (await res.body.json()) as { stalls: number; long_gcs: number };
      return { stalls: seen.stalls, longGcs: seen.long_gcs };
    });
  }
  if (allInOne) {
    const a: AllInOne = allInOne;
    stalls.allinone = await probeStalls(TARGET.allinonePaid, async () => ({
      stalls: await a.stalls(),
      longGcs: await a.longGcs(),
    }));
  }
  if (allInOnePg) {
    const a: AllInOne = allInOnePg;
    stalls.allinonePg = await probeStalls(TARGET.allinonePgPaid, async () => ({
      stalls: await a.stalls(),
      longGcs: await a.longGcs(),
    }));
  }

  // Books check after all traffic, while the gateway and the all-in-one are still up.
  const failedVerify = (err: unknown): VerifyResult => ({ ok: false, details: { error: String(err) } });
  const verify: VerifyResult | null = gateway
    ? await gateway.verify(Object.fromEntries(traffic)).catch(failedVerify)
    : null;
  const verifyAllInOne: VerifyResult | null = allInOne
    ? await allInOne.verify(Object.fromEntries(traffic)).catch(failedVerify)
    : null;
  const pgSetup = allInOnePg;
  const verifyAllInOnePg: VerifyResult | null = pgSetup
    ? await pgSetup.verify(Object.fromEntries(traffic)).catch(failedVerify)
    : null;

  const allNames = [
    TARGET.direct,
    TARGET.nginx,
    TARGET.bare,
    TARGET.floor,
    TARGET.gatewayPaid,
    TARGET.gatewayFree,
    TARGET.gateway429,
    TARGET.gatewayReplay,
    TARGET.allinonePaid,
    TARGET.allinoneFree,
    TARGET.allinoneReplay,
    TARGET.allinonePgPaid,
    TARGET.allinonePgFree,
    TARGET.allinonePgReplay,
    ...targets.map((t) => t.name).filter((n) => !(Object.values(TARGET) as string[]).includes(n)),
  ];
  const summaries = allNames.map((name) => summarize(name, rounds.get(name) ?? []));
  const ratios = computeRatios(new Map(summaries.map((s) => [s.name, s])), {
    paidStore: medianStoreOps(paidRounds),
    rssBytesPer100kKeys: extended.memory?.gatewayRssBytes.per100kKeys ?? null,
    heapBytesPer100kKeys: extended.memory?.gatewayHeapRetainedBytes?.per100kKeys ?? null,
    scaleVsSmallCpu: extended.scale?.vsSmall?.cpuUsPerRequest ?? null,
    stalls,
  });
  const checks = evaluateChecks(ratios);
  const warned = warnings(summaries, config.rate, machine);
  const markdown = renderMarkdown({
    date,
    machine,
    rounds: config.rounds,
    durationS: config.durationS,
    latencyDurationS: config.latencyDurationS,
    rate: config.rate,
    connections: config.connections,
    autocannonDurationS: config.autocannonDurationS,
    autocannonConnections: config.autocannonConnections,
    summaries,
    ratios,
    checks,
    warnings: warned,
    verify,
    verifyAllInOne,
    verifyAllInOnePg,
    serviceCpuScope:
      (services ? 'the gateway’s own Redis and Postgres' : 'every redis-server and postgres process') +
      '; the all-in-one rows: its one process and its children (the Temporal dev server), stores inside it; the ' +
      'all-in-one on Postgres and Redis: its process and children, its own redis-server and every postgres process',
  });

  const fullMarkdown = `${markdown}${renderStoreOps(rounds)}${renderExtended(extended, small)}`;
  const results = {
    schema: 4,
    date,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    config: { ...config, resultsDir: relative(REPO_ROOT, config.resultsDir), wrkThreads: 1 },
    machine,
    serviceCpuScope: services ?? 'every redis-server and postgres process on the machine',
    targets: Object.fromEntries(
      allNames.map((name) => {
        const target = targets.find((t) => t.name === name);
        const summary = summaries.find((s) => s.name === name);
        return [
          name,
          target
            ? { ...describeTarget(target), measured: true, median: summary, rounds: rounds.get(name) ?? [] }
            : { measured: false },
        ];
      }),
    ),
    traffic: Object.fromEntries(traffic),
    ratios,
    checks,
    warnings: warned,
    verify,
    verifyAllInOne,
    verifyAllInOnePg,
    extended,
  };
  mkdirSync(config.resultsDir, { recursive: true });
  const jsonPath = join(config.resultsDir, `gateway-${date}.json`);
  const mdPath = join(config.resultsDir, `gateway-${date}.md`);
  writeFileSync(jsonPath, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(mdPath, fullMarkdown);

  console.log(`\n${fullMarkdown}`);
  console.log(`written: ${relative(process.cwd(), jsonPath)}, ${relative(process.cwd(), mdPath)}`);
  const missed = checks.filter((c) => c.pass === false).map((c) => c.id);
  if (missed.length > 0) console.log(`performance targets missed: ${missed.join(', ')} (reported, not fatal)`);
  if (extended.scale && !extended.scale.usageRowsOk) {
    console.error('books check FAILED: usage rows of the scale row do not match its successful responses');
    return 1;
  }
  if (verify && !verify.ok) {
    console.error('books check FAILED: usage rows do not match successful responses, or something was overspent');
    return 1;
  }
  if (verifyAllInOne && !verifyAllInOne.ok) {
    console.error('books check FAILED on the all-in-one: the balance did not fall by its billed calls, or drift');
    return 1;
  }
  if (verifyAllInOnePg && !verifyAllInOnePg.ok) {
    console.error('books check FAILED on the all-in-one on Postgres and Redis: its balance or its reconciliation');
    return 1;
  }
  return 0;
}

main()
  .then(async (code) => {
    await stopEverything();
    process.exit(code);
  })
  .catch(async (err: unknown) => {
    if (interrupted) return; // the signal handler stops everything and exits
    console.error('gateway bench failed:', err instanceof Error ? err.message : err);
    await stopEverything();
    process.exit(1);
  });
