// Medians across rounds, the warnings, and the Markdown report; the targets themselves are in targets.ts.
import type { StoreOpsPerCall } from './store-ops.js';
import { medianOf } from './stats.js';
import type { Check, Ratios } from './targets.js';
import { TARGET, type AutocannonResult, type CapacityResult, type LatencyResult, type VerifyResult } from './types.js';

export interface Round {
  capacity: CapacityResult;
  latency: LatencyResult;
  /** The autocannon cross-check at the same rate: reported, never used by a target. */
  autocannon: AutocannonResult;
  /** Gateway rows: what each call of the capacity run cost Redis and Postgres (store-ops.ts). */
  store?: StoreOpsPerCall;
}

export interface CapacityMedian extends Record<string, number> {
  requestsPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** target + redis + postgres. */
  cpuUsPerRequest: number;
  cpuTargetUsPerRequest: number;
  cpuRedisUsPerRequest: number;
  cpuPostgresUsPerRequest: number;
  cpuUpstreamUsPerRequest: number;
  cpuLoadgenUsPerRequest: number;
  cpuOtherUsPerRequest: number;
  unexpected: number;
  socketErrors: number;
}

export interface LatencyMedian extends Record<string, number> {
  achievedRate: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  scheduleP50Ms: number;
  scheduleP99Ms: number;
  cpuUsPerRequest: number;
  unexpected: number;
  errors: number;
}

/** autocannon's figures (1 ms resolution), medians across rounds. */
export interface AutocannonMedian extends Record<string, number> {
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  requestsSent: number;
  responses: number;
  latencySamples: number;
  non2xx: number;
  unexpected: number;
  mismatches: number;
  errors: number;
  timeouts: number;
}

export interface TargetSummary {
  name: string;
  measured: boolean;
  capacity: CapacityMedian | null;
  latency: LatencyMedian | null;
  autocannon: AutocannonMedian | null;
}

export function summarize(name: string, rounds: readonly Round[]): TargetSummary {
  if (rounds.length === 0) return { name, measured: false, capacity: null, latency: null, autocannon: null };
  const capacity = medianOf<CapacityMedian>(
    rounds.map(({ capacity: c }) => ({
      requestsPerSec: c.requestsPerSec,
      latencyP50Ms: c.latencyMs.p50,
      latencyP99Ms: c.latencyMs.p99,
      cpuUsPerRequest: c.cpuUsPerRequest,
      cpuTargetUsPerRequest: c.cpuUsPerRequestByPart.target,
      cpuRedisUsPerRequest: c.cpuUsPerRequestByPart.redis,
      cpuPostgresUsPerRequest: c.cpuUsPerRequestByPart.postgres,
      cpuUpstreamUsPerRequest: c.cpuUsPerRequestByPart.upstream,
      cpuLoadgenUsPerRequest: c.cpuUsPerRequestByPart.loadgen,
      cpuOtherUsPerRequest: c.cpuUsPerRequestByPart.other,
      unexpected: c.unexpected,
      socketErrors: c.socketErrors,
    })),
  );
  const latency = medianOf<LatencyMedian>(
    rounds.map(({ latency: l }) => ({
      achievedRate: l.achievedRate,
      p50Ms: l.latencyMs.p50,
      p90Ms: l.latencyMs.p90,
      p99Ms: l.latencyMs.p99,
      p999Ms: l.latencyMs.p999,
      maxMs: l.latencyMs.max,
      scheduleP50Ms: l.scheduleLatencyMs.p50,
      scheduleP99Ms: l.scheduleLatencyMs.p99,
      cpuUsPerRequest: l.cpuUsPerRequest,
      unexpected: l.unexpected,
      errors: l.errors,
    })),
  );
  const autocannon = medianOf<AutocannonMedian>(
    rounds.map(({ autocannon: a }) => ({
      p50Ms: a.latencyMs.p50,
      p90Ms: a.latencyMs.p90,
      p99Ms: a.latencyMs.p99,
      maxMs: a.latencyMs.max,
      requestsSent: a.requestsSent,
      responses: a.responses,
      latencySamples: a.latencySamples,
      non2xx: a.non2xx,
      unexpected: a.unexpected,
      mismatches: a.mismatches,
      errors: a.errors,
      timeouts: a.timeouts,
    })),
  );
  return { name, measured: true, capacity, latency, autocannon };
}

export { computeRatios, evaluateChecks, type Check, type RatioInputs, type Ratios } from './targets.js';

/** Anything that makes a row's figures suspect: wrong statuses, errors, a generator that fell behind, a busy machine. */
export function warnings(
  summaries: readonly TargetSummary[],
  rate: number,
  machine: { cores: number; loadAverageAtStart: number[] },
): string[] {
  const result: string[] = [];
  const load = machine.loadAverageAtStart[0] ?? 0;
  if (load > machine.cores * 0.5) {
    result.push(`load average ${load} on ${machine.cores} cores at the start: other work was competing for the CPU`);
  }
  for (const s of summaries) {
    if (!s.capacity || !s.latency) continue;
    if (s.capacity.unexpected > 0) result.push(`${s.name}: ${s.capacity.unexpected} unexpected statuses (wrk, median)`);
    if (s.capacity.socketErrors > 0) result.push(`${s.name}: ${s.capacity.socketErrors} socket errors (wrk, median)`);
    if (s.latency.unexpected > 0) result.push(`${s.name}: ${s.latency.unexpected} unexpected statuses at ${rate}/s`);
    if (s.latency.errors > 0) result.push(`${s.name}: ${s.latency.errors} failed requests at ${rate}/s`);
    if (s.latency.achievedRate < rate * 0.98) {
      result.push(`${s.name}: the generator reached only ${s.latency.achievedRate} of ${rate} req/s`);
    }
    if (s.autocannon) {
      const a = s.autocannon;
      if (a.unexpected > 0) result.push(`${s.name}: ${a.unexpected} unexpected statuses from autocannon (median)`);
      if (a.errors > 0) result.push(`${s.name}: ${a.errors} autocannon errors (${a.timeouts} timeouts; median)`);
    }
    // CPU-µs per request of unrelated processes × requests per second = their share of the machine during the run.
    const otherShare = (s.capacity.cpuOtherUsPerRequest * s.capacity.requestsPerSec) / (machine.cores * 1e6);
    if (otherShare > 0.1) {
      result.push(
        `${s.name}: unrelated processes used ${Math.round(otherShare * 100)}% of the machine during its capacity run`,
      );
    }
  }
  return result;
}

// ---- Markdown ----

const fmt = (value: number | null | undefined, digits: number): string =>
  value === null || value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);

/** autocannon's integer milliseconds (a median of an even number of rounds may end in .5). */
const fmtMs = (value: number | undefined): string =>
  value === undefined || !Number.isFinite(value) ? '–' : Number.isInteger(value) ? String(value) : value.toFixed(1);

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export interface ReportInput {
  date: string;
  machine: { cpuModel: string; cores: number; node: string; nginx: string; wrk: string; loadAverageAtStart: number[] };
  rounds: number;
  durationS: number;
  latencyDurationS: number;
  rate: number;
  connections: number;
  autocannonDurationS: number;
  autocannonConnections: number;
  summaries: TargetSummary[];
  ratios: Ratios;
  checks: Check[];
  warnings: string[];
  verify: VerifyResult | null;
  /** The all-in-one's books check (allinone.ts), when it ran. */
  verifyAllInOne?: VerifyResult | null;
  /** The same for the all-in-one on real Postgres and Redis. */
  verifyAllInOnePg?: VerifyResult | null;
  /** Which redis/postgres processes the CPU columns count. */
  serviceCpuScope: string;
}

export function renderMarkdown(input: ReportInput): string {
  const bare = input.summaries.find((s) => s.name === TARGET.bare);
  const bareRps = bare?.capacity?.requestsPerSec ?? null;
  const rows = input.summaries.map((s) => {
    if (!s.capacity || !s.latency) return [s.name, 'not measured', ...Array<string>(13).fill('')];
    const vsBare = bareRps ? s.capacity.requestsPerSec / bareRps : null;
    const addedP50 = bare?.latency ? s.latency.p50Ms - bare.latency.p50Ms : null;
    const addedP99 = bare?.latency ? s.latency.p99Ms - bare.latency.p99Ms : null;
    return [
      s.name,
      fmt(s.capacity.requestsPerSec, 0),
      fmt(vsBare, 2),
      fmt(s.latency.p50Ms, 3),
      fmt(s.latency.p90Ms, 3),
      fmt(s.latency.p99Ms, 3),
      fmt(addedP50, 3),
      fmt(addedP99, 3),
      fmtMs(s.autocannon?.p50Ms),
      fmtMs(s.autocannon?.p99Ms),
      fmt(s.capacity.cpuUsPerRequest, 1),
      fmt(s.capacity.cpuTargetUsPerRequest, 1),
      fmt(s.capacity.cpuRedisUsPerRequest, 1),
      fmt(s.capacity.cpuPostgresUsPerRequest, 1),
      `${fmt(s.capacity.cpuLoadgenUsPerRequest, 1)} / ${fmt(s.capacity.cpuOtherUsPerRequest, 1)}`,
    ];
  });
  const checkRows = input.checks.map((c) => [
    c.description,
    c.wanted,
    c.measured === null ? 'not measured' : `${c.measured}${c.unit}${c.detail ? ` (${c.detail})` : ''}`,
    c.pass === null ? 'not measured' : c.pass ? 'PASS' : '**FAIL**',
  ]);
  const m = input.machine;
  const parts = [
    `# Gateway benchmark, ${input.date}`,
    '',
    `${m.cpuModel}, ${m.cores} cores; Node ${m.node}, ${m.nginx}, ${m.wrk}; load average at start ` +
      `${m.loadAverageAtStart.join(' / ')}.`,
    `Medians of ${input.rounds} round(s). Capacity: wrk -t1 -c${input.connections} for ${input.durationS} s. ` +
      `Latency: open loop at ${input.rate} req/s for ${input.latencyDurationS} s, in ms. ` +
      'CPU: µs per request during the capacity run; total = proxy/gateway process + redis + postgres ' +
      `(${input.serviceCpuScope}); wrk and unrelated processes are shown but not counted.`,
    '',
    table(
      [
        'row',
        'req/s',
        '× bare',
        'p50',
        'p90',
        'p99',
        '+p50 vs bare',
        '+p99 vs bare',
        'autocannon p50 (1 ms resolution)',
        'autocannon p99 (1 ms resolution)',
        'CPU-µs/req total',
        'proxy',
        'redis',
        'postgres',
        'wrk / other (excluded)',
      ],
      rows,
    ),
    '',
    `autocannon columns: autocannon 8 at \`overallRate\` ${input.rate} req/s over ${input.autocannonConnections} ` +
      `connections for ${input.autocannonDurationS} s, right after each latency run, with its default ` +
      'coordinated-omission back-fill. A cross-check only: its histogram has 1 ms resolution and each connection ' +
      'sends its per-second quota in a burst. The targets use the µs-resolution open-loop generator (p50/p90/p99).',
    '',
    '## Targets (issue 32)',
    '',
    'Each against floor_node_gateway measured in the same run: CPU is the row’s total CPU-µs per call in its ' +
      'capacity run (process + its Redis + its Postgres), Postgres the Postgres part alone. Redis and Postgres counts ' +
      'are gateway_paid’s capacity runs (store operations below); the scale ratio and RSS per 100k keys come from the ' +
      'scale and memory rows. "npm start": the all-in-one process on embedded PGlite and in-process counters, and ' +
      '"npm start on Postgres and Redis" the same with DATABASE_URL and REDIS_URL; their stalls are event-loop ' +
      'delays over 20 ms (core/stall-monitor.ts: a 10 ms timer more than 20 ms late) during 60 s at the fixed rate, ' +
      'against the bare proxy’s over the same probe.',
    '',
    table(['target', 'wanted', 'measured', 'result'], checkRows),
    '',
    '## Books check',
    '',
    input.verify === null
      ? 'Not run: no gateway targets (bench/gateway/gateway-targets.ts returned null).'
      : `${input.verify.ok ? 'OK' : '**FAILED**'}: \`${JSON.stringify(input.verify.details)}\``,
  ];
  if (input.verifyAllInOne) {
    const v = input.verifyAllInOne;
    parts.push('', `All-in-one: ${v.ok ? 'OK' : '**FAILED**'}: \`${JSON.stringify(v.details)}\``);
  }
  if (input.verifyAllInOnePg) {
    const v = input.verifyAllInOnePg;
    parts.push('', `All-in-one on Postgres and Redis: ${v.ok ? 'OK' : '**FAILED**'}: \`${JSON.stringify(v.details)}\``);
  }
  if (input.warnings.length > 0) {
    parts.push('', '## Warnings', '', ...input.warnings.map((w) => `- ${w}`));
  }
  return `${parts.join('\n')}\n`;
}
