// Issue 32's targets (Gateway v4): each stated against the floor row measured in the same run (floor-proxy.ts: what
// no design under the durability contract can skip), computed from the rows' medians (report.ts), gateway_paid's
// store operations (store-ops.ts), the scale and memory rows (extended.ts) and the all-in-one rows' event-loop stalls
// (allinone.ts), each judged PASS/FAIL at its limit (null: a row it needs did not run). The throughput ratios to the
// bare proxy (issue 23's figures) stay in Ratios for context.
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
  /** The same for its live heap (heap snapshots): what the keys keep, without the heap's expansion. */
  heapMbPer100kKeys: number | null;
  /** The same on the all-in-one `npm start` (allinone.ts); CPU is its one process and children. */
  allinonePaidVsBareThroughput: number | null;
  allinoneFreeVsBareThroughput: number | null;
  allinoneReplayVsBareThroughput: number | null;
  allinoneAddedLatencyP50Ms: number | null;
  allinoneAddedLatencyP99Ms: number | null;
  allinoneCpuUsPerCall: number | null;
  allinoneCpuAboveBareUs: number | null;
  /** Issue 32: CPU-µs per call of the floor row (its process + Redis + Postgres) and each row over it. */
  floorCpuUsPerCall: number | null;
  paidVsFloorCpu: number | null;
  freeVsFloorCpu: number | null;
  freeVsPaidCpu: number | null;
  /** Postgres CPU-µs per call: the paid row's, the floor row's, and their ratio. */
  paidPostgresUsPerCall: number | null;
  floorPostgresUsPerCall: number | null;
  paidVsFloorPostgres: number | null;
  /** The scale row's CPU per paid call ÷ the small setup's (100k keys, 10k listings, 1,000 keys × 100 APIs). */
  scaleVsSmallCpu: number | null;
  /** allinone_paid req/s ÷ gateway_paid req/s (the all-in-one against the gateway's own process). */
  allinoneVsGatewayThroughput: number | null;
  /** Event-loop stalls over 20 ms in 60 s at the fixed rate: the bare proxy's and the all-in-one's. */
  bareStalls: number | null;
  allinoneStalls: number | null;
  /** The all-in-one on real Postgres and Redis: added p99, paid throughput ÷ the gateway's, stalls. */
  allinonePgAddedLatencyP99Ms: number | null;
  allinonePgVsGatewayThroughput: number | null;
  allinonePgCpuUsPerCall: number | null;
  allinonePgStalls: number | null;
}

/** What the targets need beyond the rows' own medians. */
export interface RatioInputs {
  /** gateway_paid's store operations per call, medians across rounds (store-ops.ts `medianStoreOps`). */
  paidStore?: { redisCommands: number; redisScripts: number; pgRowsWritten: number } | null;
  /** extended.ts: the gateway's RSS growth per 100k keys, bytes. */
  rssBytesPer100kKeys?: number | null;
  /** extended.ts: the gateway's live-heap growth per 100k keys, bytes. */
  heapBytesPer100kKeys?: number | null;
  /** extended.ts: the scale row's CPU per call ÷ the small setup's. */
  scaleVsSmallCpu?: number | null;
  /** allinone.ts: event-loop stalls over 20 ms in the stall probe (60 s at the fixed rate). */
  stalls?: { bare: number | null; allinone: number | null; allinonePg?: number | null } | null;
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
  const pgCpu = (name: string): number | null => {
    const value = byName.get(name)?.capacity?.cpuPostgresUsPerRequest;
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
    heapMbPer100kKeys: finite(
      inputs.heapBytesPer100kKeys === null || inputs.heapBytesPer100kKeys === undefined
        ? null
        : inputs.heapBytesPer100kKeys / 1024 / 1024,
      1,
    ),
    allinonePaidVsBareThroughput: ratio(rps(TARGET.allinonePaid), bare),
    allinoneFreeVsBareThroughput: ratio(rps(TARGET.allinoneFree), bare),
    allinoneReplayVsBareThroughput: ratio(rps(TARGET.allinoneReplay), bare),
    allinoneAddedLatencyP50Ms: minus(lat(TARGET.allinonePaid, 'p50Ms'), lat(TARGET.bare, 'p50Ms')),
    allinoneAddedLatencyP99Ms: minus(lat(TARGET.allinonePaid, 'p99Ms'), lat(TARGET.bare, 'p99Ms')),
    allinoneCpuUsPerCall: cpu(TARGET.allinonePaid),
    allinoneCpuAboveBareUs: above(TARGET.allinonePaid),
    floorCpuUsPerCall: cpu(TARGET.floor),
    paidVsFloorCpu: ratio(cpu(TARGET.gatewayPaid), cpu(TARGET.floor)),
    freeVsFloorCpu: ratio(cpu(TARGET.gatewayFree), cpu(TARGET.floor)),
    freeVsPaidCpu: ratio(cpu(TARGET.gatewayFree), cpu(TARGET.gatewayPaid)),
    paidPostgresUsPerCall: pgCpu(TARGET.gatewayPaid),
    floorPostgresUsPerCall: pgCpu(TARGET.floor),
    paidVsFloorPostgres: ratio(pgCpu(TARGET.gatewayPaid), pgCpu(TARGET.floor)),
    scaleVsSmallCpu: finite(inputs.scaleVsSmallCpu, 3),
    allinoneVsGatewayThroughput: ratio(rps(TARGET.allinonePaid), rps(TARGET.gatewayPaid)),
    bareStalls: inputs.stalls?.bare ?? null,
    allinoneStalls: inputs.stalls?.allinone ?? null,
    allinonePgAddedLatencyP99Ms: minus(lat(TARGET.allinonePgPaid, 'p99Ms'), lat(TARGET.bare, 'p99Ms')),
    allinonePgVsGatewayThroughput: ratio(rps(TARGET.allinonePgPaid), rps(TARGET.gatewayPaid)),
    allinonePgCpuUsPerCall: cpu(TARGET.allinonePgPaid),
    allinonePgStalls: inputs.stalls?.allinonePg ?? null,
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

/**
 * Issue 32's targets (Gateway v4), each against the floor row of the same run: the paid and the free call's CPU, the
 * stores' share, flat at scale, and the all-in-one `npm start` holding its latency without stalls.
 */
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
  const r = ratios;
  const us = (v: number | null) => (v === null ? '–' : `${v} µs`);
  const cpuDetail = (row: number | null) => `${us(row)} over the floor’s ${us(r.floorCpuUsPerCall)}`;
  const overBare = (stalls: number | null) =>
    stalls === null || r.bareStalls === null ? null : Math.max(0, stalls - r.bareStalls);
  const stallsOverBare = overBare(r.allinoneStalls);
  return [
    atMost(
      'paid_cpu_vs_floor',
      'paid call: CPU per call ÷ the floor row’s (gateway + Redis + Postgres; aim 1.25×)',
      r.paidVsFloorCpu,
      1.5,
      '×',
      cpuDetail(r.gatewayCpuUsPerCall),
    ),
    atMost('free_cpu_vs_paid', 'free call: CPU per call ÷ the paid call’s', r.freeVsPaidCpu, 1, '×'),
    atMost('free_cpu_vs_floor', 'free call: CPU per call ÷ the floor row’s', r.freeVsFloorCpu, 1.5, '×'),
    atMost(
      'pg_cpu_vs_floor',
      'Postgres CPU per paid call ÷ the floor row’s Postgres',
      r.paidVsFloorPostgres,
      2,
      '×',
      `${us(r.paidPostgresUsPerCall)} over ${us(r.floorPostgresUsPerCall)}`,
    ),
    atMost(
      'pg_rows',
      'Postgres rows written per paid call (inserted + updated, every table)',
      r.pgRowsWrittenPerCall,
      1.1,
      '',
    ),
    atMost('redis_commands', 'Redis commands per paid call at 32 connections', r.redisCommandsPerCall, 1, ''),
    atMost('redis_scripts', 'Redis scripts per paid call at 32 connections', r.redisScriptsPerCall, 0.2, ''),
    atMost('scale_cpu', 'at scale: CPU per paid call ÷ the small setup’s', r.scaleVsSmallCpu, 1.15, '×'),
    atMost(
      'rss_per_100k_keys',
      'gateway RSS per 100k keys seen',
      r.rssMbPer100kKeys,
      300,
      ' MB',
      r.heapMbPer100kKeys === null ? undefined : `live heap ${r.heapMbPer100kKeys} MB per 100k keys (heap snapshots)`,
    ),
    atMost(
      'allinone_added_latency_p99',
      'npm start: added p99 over the bare proxy at the fixed rate',
      r.allinoneAddedLatencyP99Ms,
      3,
      ' ms',
    ),
    atMost(
      'allinone_stalls',
      'npm start: event-loop stalls over 20 ms in 60 s at the fixed rate, beyond the bare proxy’s',
      stallsOverBare,
      0,
      '',
      `${r.allinoneStalls ?? '–'} against the bare proxy’s ${r.bareStalls ?? '–'}`,
    ),
    atLeast(
      'allinone_throughput',
      'npm start: paid throughput ÷ the gateway process’s',
      r.allinoneVsGatewayThroughput,
      0.9,
      '×',
    ),
    atMost(
      'allinone_pg_added_latency_p99',
      'npm start on Postgres and Redis: added p99 over the bare proxy at the fixed rate',
      r.allinonePgAddedLatencyP99Ms,
      3,
      ' ms',
    ),
    atMost(
      'allinone_pg_stalls',
      'npm start on Postgres and Redis: event-loop stalls over 20 ms in 60 s, beyond the bare proxy’s',
      overBare(r.allinonePgStalls),
      0,
      '',
      `${r.allinonePgStalls ?? '–'} against the bare proxy’s ${r.bareStalls ?? '–'}`,
    ),
    atLeast(
      'allinone_pg_throughput',
      'npm start on Postgres and Redis: paid throughput ÷ the gateway process’s',
      r.allinonePgVsGatewayThroughput,
      0.9,
      '×',
    ),
  ];
}
