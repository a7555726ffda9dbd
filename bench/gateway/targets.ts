// Issue 23's targets (Gateway v3): the ratios and differences they are stated in, computed from the rows' medians
// (report.ts), gateway_paid's store operations (store-ops.ts) and the memory row (extended.ts), and each judged
// PASS/FAIL at its limit (null: a row it needs did not run).
import type { TargetSummary } from './report.js';
import { round } from './stats.js';
import { TARGET } from './types.js';

export interface Ratios {
  /** nginx_proxy / direct and bare / direct: what any proxy costs on this machine (for context). */
  nginxVsDirectThroughput: number | null;
  bareVsDirectThroughput: number | null;
  bareVsNginxThroughput: number | null;
  /** Row req/s ÷ bare_node_proxy req/s (capacity runs). */
  gatewayVsBareThroughput: number | null;
  freeVsBareThroughput: number | null;
  replayVsBareThroughput: number | null;
  gateway429VsBareThroughput: number | null;
  /** For context (issue 13's target): 429 answers per paid call. */
  gateway429VsGatewayThroughput: number | null;
  /** Gateway minus bare proxy at the fixed rate, in ms. */
  addedLatencyP50Ms: number | null;
  addedLatencyP99Ms: number | null;
  /** CPU-µs per paid call: gateway + its Redis + its Postgres (the capacity run). */
  gatewayCpuUsPerCall: number | null;
  /**
   * CPU-µs per call of the bare proxy's own process. Its store columns are left out: it uses no store, so whatever
   * Redis or Postgres did during its run was someone else's work.
   */
  bareCpuUsPerCall: number | null;
  /** gatewayCpuUsPerCall − bareCpuUsPerCall: what the gateway's work costs above forwarding. */
  gatewayCpuAboveBareUs: number | null;
  /** gateway_paid's store operations per call (store-ops.ts; medians across rounds). */
  redisCommandsPerCall: number | null;
  redisScriptsPerCall: number | null;
  pgRowsWrittenPerCall: number | null;
  /** The gateway's RSS growth per 100k keys seen, MB (extended.ts: linear extrapolation from 1,000 keys). */
  rssMbPer100kKeys: number | null;
  /** The same on the all-in-one `npm start` (allinone.ts); CPU is its one process and children. */
  allinonePaidVsBareThroughput: number | null;
  allinoneFreeVsBareThroughput: number | null;
  allinoneReplayVsBareThroughput: number | null;
  allinoneAddedLatencyP50Ms: number | null;
  allinoneAddedLatencyP99Ms: number | null;
  allinoneCpuUsPerCall: number | null;
  allinoneCpuAboveBareUs: number | null;
}

/** What the targets need beyond the rows' own medians. */
export interface RatioInputs {
  /** gateway_paid's store operations per call, medians across rounds (store-ops.ts `medianStoreOps`). */
  paidStore?: { redisCommands: number; redisScripts: number; pgRowsWritten: number } | null;
  /** extended.ts: the gateway's RSS growth per 100k keys, bytes. */
  rssBytesPer100kKeys?: number | null;
}

export function computeRatios(byName: ReadonlyMap<string, TargetSummary>, inputs: RatioInputs = {}): Ratios {
  const rps = (name: string): number | null => byName.get(name)?.capacity?.requestsPerSec ?? null;
  const lat = (name: string, key: 'p50Ms' | 'p99Ms'): number | null => byName.get(name)?.latency?.[key] ?? null;
  const ratio = (a: number | null, b: number | null): number | null =>
    a !== null && b !== null && b > 0 ? round(a / b, 3) : null;
  const minus = (a: number | null, b: number | null): number | null => (a !== null && b !== null ? round(a - b) : null);
  const cpu = (name: string): number | null => {
    const value = byName.get(name)?.capacity?.cpuUsPerRequest;
    return value === undefined || !Number.isFinite(value) ? null : round(value, 1);
  };
  const bareCpuRaw = byName.get(TARGET.bare)?.capacity?.cpuTargetUsPerRequest;
  const bareCpu = bareCpuRaw === undefined || !Number.isFinite(bareCpuRaw) ? null : round(bareCpuRaw, 1);
  const above = (name: string): number | null => {
    const c = cpu(name);
    return c !== null && bareCpu !== null ? round(c - bareCpu, 1) : null;
  };
  const finite = (v: number | null | undefined, digits: number): number | null =>
    v === null || v === undefined || !Number.isFinite(v) ? null : round(v, digits);
  const bare = rps(TARGET.bare);
  return {
    nginxVsDirectThroughput: ratio(rps(TARGET.nginx), rps(TARGET.direct)),
    bareVsDirectThroughput: ratio(bare, rps(TARGET.direct)),
    bareVsNginxThroughput: ratio(bare, rps(TARGET.nginx)),
    gatewayVsBareThroughput: ratio(rps(TARGET.gatewayPaid), bare),
    freeVsBareThroughput: ratio(rps(TARGET.gatewayFree), bare),
    replayVsBareThroughput: ratio(rps(TARGET.gatewayReplay), bare),
    gateway429VsBareThroughput: ratio(rps(TARGET.gateway429), bare),
    gateway429VsGatewayThroughput: ratio(rps(TARGET.gateway429), rps(TARGET.gatewayPaid)),
    addedLatencyP50Ms: minus(lat(TARGET.gatewayPaid, 'p50Ms'), lat(TARGET.bare, 'p50Ms')),
    addedLatencyP99Ms: minus(lat(TARGET.gatewayPaid, 'p99Ms'), lat(TARGET.bare, 'p99Ms')),
    gatewayCpuUsPerCall: cpu(TARGET.gatewayPaid),
    bareCpuUsPerCall: bareCpu,
    gatewayCpuAboveBareUs: above(TARGET.gatewayPaid),
    redisCommandsPerCall: finite(inputs.paidStore?.redisCommands, 3),
    redisScriptsPerCall: finite(inputs.paidStore?.redisScripts, 3),
    pgRowsWrittenPerCall: finite(inputs.paidStore?.pgRowsWritten, 3),
    rssMbPer100kKeys: finite(
      inputs.rssBytesPer100kKeys === null || inputs.rssBytesPer100kKeys === undefined
        ? null
        : inputs.rssBytesPer100kKeys / 1024 / 1024,
      1,
    ),
    allinonePaidVsBareThroughput: ratio(rps(TARGET.allinonePaid), bare),
    allinoneFreeVsBareThroughput: ratio(rps(TARGET.allinoneFree), bare),
    allinoneReplayVsBareThroughput: ratio(rps(TARGET.allinoneReplay), bare),
    allinoneAddedLatencyP50Ms: minus(lat(TARGET.allinonePaid, 'p50Ms'), lat(TARGET.bare, 'p50Ms')),
    allinoneAddedLatencyP99Ms: minus(lat(TARGET.allinonePaid, 'p99Ms'), lat(TARGET.bare, 'p99Ms')),
    allinoneCpuUsPerCall: cpu(TARGET.allinonePaid),
    allinoneCpuAboveBareUs: above(TARGET.allinonePaid),
  };
}

export interface Check {
  id: string;
  description: string;
  wanted: string;
  measured: number | null;
  /** The measured figure's unit ('×', ' ms', ' µs', ' MB' or ''). */
  unit: string;
  /** Shown beside the measured figure, e.g. the absolute CPU figure beside the CPU above the bare proxy. */
  detail?: string;
  /** null: not measured (a row it depends on was not run). */
  pass: boolean | null;
}

/** Issue 23's targets (Gateway v3): the gateway's own process, then the same calls in the all-in-one `npm start`. */
export function evaluateChecks(ratios: Ratios): Check[] {
  const check =
    (cmp: '≥' | '≤') =>
    (id: string, description: string, value: number | null, limit: number, unit: string, detail?: string): Check => ({
      id,
      description,
      wanted: `${cmp} ${cmp === '≤' && unit.trim() === 'ms' ? '+' : ''}${limit}${unit}`,
      measured: value,
      unit,
      ...(detail && value !== null ? { detail } : {}),
      pass: value === null ? null : cmp === '≥' ? value >= limit : value <= limit,
    });
  const atLeast = check('≥');
  const atMost = check('≤');
  const cpuDetail = (absolute: number | null) =>
    absolute === null ? undefined : `absolute ${absolute} µs; bare proxy ${ratios.bareCpuUsPerCall ?? '–'} µs`;
  const r = ratios;
  return [
    atLeast('paid_throughput', 'paid-call throughput ÷ bare Node proxy', r.gatewayVsBareThroughput, 0.75, '×'),
    atLeast(
      'paid_throughput_floor',
      'paid-call throughput ÷ bare Node proxy (must reach)',
      r.gatewayVsBareThroughput,
      0.6,
      '×',
    ),
    atMost('added_latency_p50', 'added latency at the fixed rate, p50', r.addedLatencyP50Ms, 0.3, ' ms'),
    atMost('added_latency_p99', 'added latency at the fixed rate, p99', r.addedLatencyP99Ms, 3, ' ms'),
    atMost(
      'cpu_above_bare',
      'CPU per paid call above the bare proxy’s (gateway + Redis + Postgres)',
      r.gatewayCpuAboveBareUs,
      50,
      ' µs',
      cpuDetail(r.gatewayCpuUsPerCall),
    ),
    atMost('redis_commands', 'Redis commands per paid call at capacity', r.redisCommandsPerCall, 2, ''),
    atMost('redis_scripts', 'Redis scripts per paid call at capacity', r.redisScriptsPerCall, 0.2, ''),
    atMost(
      'pg_rows',
      'Postgres rows written per paid call (inserted + updated, every table)',
      r.pgRowsWrittenPerCall,
      1.1,
      '',
    ),
    atMost('rss_per_100k_keys', 'gateway RSS per 100k keys seen', r.rssMbPer100kKeys, 300, ' MB'),
    atLeast('free_throughput', 'free-endpoint call ÷ bare', r.freeVsBareThroughput, 0.85, '×'),
    atLeast('replay_throughput', 'replay ÷ bare', r.replayVsBareThroughput, 1, '×'),
    atLeast('throughput_429', '429 ÷ bare', r.gateway429VsBareThroughput, 1, '×'),
    atLeast(
      'allinone_paid_throughput',
      'paid-call throughput ÷ bare, in npm start',
      r.allinonePaidVsBareThroughput,
      0.75,
      '×',
    ),
    atLeast(
      'allinone_paid_throughput_floor',
      'paid-call throughput ÷ bare, in npm start (must reach)',
      r.allinonePaidVsBareThroughput,
      0.6,
      '×',
    ),
    atMost('allinone_added_latency_p50', 'added latency p50, in npm start', r.allinoneAddedLatencyP50Ms, 0.3, ' ms'),
    atMost('allinone_added_latency_p99', 'added latency p99, in npm start', r.allinoneAddedLatencyP99Ms, 3, ' ms'),
    atMost(
      'allinone_cpu_above_bare',
      'CPU per paid call above the bare proxy’s, in npm start (its process + children)',
      r.allinoneCpuAboveBareUs,
      50,
      ' µs',
      cpuDetail(r.allinoneCpuUsPerCall),
    ),
    atLeast(
      'allinone_free_throughput',
      'free-endpoint call ÷ bare, in npm start',
      r.allinoneFreeVsBareThroughput,
      0.85,
      '×',
    ),
    atLeast('allinone_replay_throughput', 'replay ÷ bare, in npm start', r.allinoneReplayVsBareThroughput, 1, '×'),
  ];
}
