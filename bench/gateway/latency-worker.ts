// Open-loop fixed-rate load generator (see latency.ts for why not autocannon). Started by latency.ts with its config
// as JSON in argv[2] and an IPC channel: warms up, says 'ready', waits for 'go', measures, says 'done', exits.
//
// Request i of a phase is due at start + i/rate. A timer wakes up at the next due time and sends every request that is
// due by then, whether or not earlier ones have answered. Each sample is timed twice:
// - latency: from handing the request to the pool to the last byte of the response (the service time the targets use);
// - schedule latency: from the due time, which also includes the timer's lateness (Node timers have 1 ms
//   granularity) and any queueing when the target falls behind, i.e. what a client on that schedule would see.
import { Pool, type Dispatcher } from 'undici';
import type { LatencyWorkerConfig, OrchestratorMessage, PhaseCounts, WorkerMessage, WorkerResult } from './latency.js';
import { percentile, round } from './stats.js';

const config = JSON.parse(process.argv[2] ?? '{}') as LatencyWorkerConfig;
const target = new URL(config.url);
const requestOptions: Dispatcher.RequestOptions = {
  path: `${target.pathname}${target.search}`,
  method: config.method,
  headers: config.headers,
  body: config.body ?? undefined,
};
// Enough connections that a slow response never holds up the next due request at these rates.
const pool = new Pool(target.origin, {
  connections: 64,
  pipelining: 1,
  keepAliveTimeout: 60_000,
  headersTimeout: 10_000,
  bodyTimeout: 10_000,
});

interface Phase {
  counts: PhaseCounts;
  /** Nanoseconds, one slot per planned request; `recorded` of them are filled. */
  latency: Float64Array;
  schedule: Float64Array;
  recorded: number;
  firstSentNs: number;
  lastSentNs: number;
}

function runPhase(durationS: number): Promise<Phase> {
  const total = Math.max(1, Math.round(config.rate * durationS));
  const intervalNs = 1e9 / config.rate;
  const phase: Phase = {
    counts: { statuses: {}, errors: 0 },
    latency: new Float64Array(total),
    schedule: new Float64Array(total),
    recorded: 0,
    firstSentNs: 0,
    lastSentNs: 0,
  };
  const start = process.hrtime.bigint();
  const elapsedNs = (): number => Number(process.hrtime.bigint() - start);

  return new Promise((resolve) => {
    let next = 0;
    let inFlight = 0;
    const finishIfDone = (): void => {
      if (next >= total && inFlight === 0) resolve(phase);
    };

    const fire = async (index: number): Promise<void> => {
      const dueNs = index * intervalNs;
      const sentNs = elapsedNs();
      if (index === 0) phase.firstSentNs = sentNs;
      phase.lastSentNs = sentNs;
      inFlight++;
      try {
        const res = await pool.request(requestOptions);
        await res.body.arrayBuffer(); // to the last byte
        const doneNs = elapsedNs();
        const key = String(res.statusCode);
        phase.counts.statuses[key] = (phase.counts.statuses[key] ?? 0) + 1;
        phase.latency[phase.recorded] = doneNs - sentNs;
        phase.schedule[phase.recorded] = doneNs - dueNs;
        phase.recorded++;
      } catch {
        phase.counts.errors++;
      } finally {
        inFlight--;
        finishIfDone();
      }
    };

    const tick = (): void => {
      const now = elapsedNs();
      while (next < total && next * intervalNs <= now) void fire(next++);
      if (next < total) setTimeout(tick, Math.max(0, (next * intervalNs - elapsedNs()) / 1e6));
      else finishIfDone();
    };
    tick();
  });
}

const toMs = (ns: number): number => round(ns / 1e6, 3);

function summarize(phase: Phase, cpuUs: number, warmup: PhaseCounts): WorkerResult {
  const latency = phase.latency.slice(0, phase.recorded).sort();
  const schedule = phase.schedule.slice(0, phase.recorded).sort();
  const sent = phase.recorded + phase.counts.errors;
  const spanS = (phase.lastSentNs - phase.firstSentNs) / 1e9;
  return {
    rate: config.rate,
    achievedRate: spanS > 0 ? round((sent - 1) / spanS, 1) : 0,
    measured: phase.counts,
    warmup,
    latencyMs: {
      p50: toMs(percentile(latency, 50)),
      p90: toMs(percentile(latency, 90)),
      p99: toMs(percentile(latency, 99)),
      p999: toMs(percentile(latency, 99.9)),
      max: toMs(latency[latency.length - 1] ?? Number.NaN),
    },
    scheduleLatencyMs: {
      p50: toMs(percentile(schedule, 50)),
      p90: toMs(percentile(schedule, 90)),
      p99: toMs(percentile(schedule, 99)),
      max: toMs(schedule[schedule.length - 1] ?? Number.NaN),
    },
    cpuUs,
  };
}

/** Resolves once the message is handed to the IPC channel, so exiting right after cannot lose it. */
const send = (message: WorkerMessage): Promise<void> =>
  new Promise((resolve, reject) => {
    if (!process.send) return reject(new Error('latency-worker must be started with an IPC channel'));
    process.send(message, undefined, undefined, (err) => (err ? reject(err) : resolve()));
  });

async function main(): Promise<void> {
  // Warm-up at the same rate: opens the pool's connections and lets both sides' JIT settle. Not recorded.
  const warmup = config.warmupS > 0 ? (await runPhase(config.warmupS)).counts : { statuses: {}, errors: 0 };
  const go = new Promise<void>((resolve) => {
    process.on('message', (message: OrchestratorMessage) => {
      if (message.type === 'go') resolve();
    });
  });
  await send({ type: 'ready' });
  await go;
  const cpuBefore = process.cpuUsage();
  const phase = await runPhase(config.durationS);
  const cpu = process.cpuUsage(cpuBefore);
  await send({ type: 'done', result: summarize(phase, cpu.user + cpu.system, warmup) });
  await pool.close();
  process.disconnect();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
