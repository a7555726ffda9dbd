// The gateway benchmark's verdicts (bench/gateway/report.ts): issue 32's targets, each against the floor row of the
// same run, computed from the rows' medians, the store operations, the scale, memory and stall figures, each PASS/FAIL
// at its limit, "not measured" when a row did not run, and the report's targets table with the absolute figures.
import { describe, expect, it } from 'vitest';
import {
  computeRatios,
  evaluateChecks,
  renderMarkdown,
  type CapacityMedian,
  type LatencyMedian,
  type TargetSummary,
} from '../../bench/gateway/report.js';
import { medianStoreOps, type StoreOpsPerCall } from '../../bench/gateway/store-ops.js';

interface Row {
  rps: number;
  p50?: number;
  p99?: number;
  /** Total CPU-µs per call (proxy + redis + postgres). */
  cpu?: number;
  /** The proxy process's own share. */
  cpuProxy?: number;
}

function summary(name: string, row: Row): TargetSummary {
  const capacity = {
    requestsPerSec: row.rps,
    latencyP50Ms: 0,
    latencyP99Ms: 0,
    cpuUsPerRequest: row.cpu ?? 0,
    cpuTargetUsPerRequest: row.cpuProxy ?? row.cpu ?? 0,
    cpuRedisUsPerRequest: 0,
    cpuPostgresUsPerRequest: (row.cpu ?? 0) - (row.cpuProxy ?? row.cpu ?? 0),
    cpuUpstreamUsPerRequest: 0,
    cpuLoadgenUsPerRequest: 0,
    cpuOtherUsPerRequest: 0,
    unexpected: 0,
    socketErrors: 0,
  } satisfies CapacityMedian;
  const latency = {
    achievedRate: 500,
    p50Ms: row.p50 ?? 0.4,
    p90Ms: 0,
    p99Ms: row.p99 ?? 2,
    p999Ms: 0,
    maxMs: 0,
    scheduleP50Ms: 0,
    scheduleP99Ms: 0,
    cpuUsPerRequest: 0,
    unexpected: 0,
    errors: 0,
  } satisfies LatencyMedian;
  return { name, measured: true, capacity, latency, autocannon: null };
}

const byName = (rows: Record<string, Row>) =>
  new Map(Object.entries(rows).map(([name, row]) => [name, summary(name, row)]));

/** A gateway that meets every target but the ones a test breaks on purpose. */
const GOOD: Record<string, Row> = {
  bare_node_proxy: { rps: 10_000, p50: 0.4, p99: 2, cpu: 50, cpuProxy: 45 },
  floor_node_gateway: { rps: 8_000, p50: 0.5, p99: 2.5, cpu: 60, cpuProxy: 50 },
  gateway_paid: { rps: 6_000, p50: 0.6, p99: 4.5, cpu: 84, cpuProxy: 64 },
  gateway_free: { rps: 6_500, cpu: 80, cpuProxy: 64 },
  gateway_429: { rps: 12_000 },
  gateway_replay: { rps: 10_500 },
  allinone_paid: { rps: 5_600, p50: 0.7, p99: 5, cpu: 120 },
  allinone_free: { rps: 8_500 },
  allinone_replay: { rps: 11_000 },
  allinone_pg_redis_paid: { rps: 5_500, p50: 0.7, p99: 4.8, cpu: 110 },
};
const STORE = { redisCommands: 0.9, redisScripts: 0.05, pgRowsWritten: 1.02 };
const RSS_250_MB = 250 * 1024 * 1024;
const INPUTS = {
  paidStore: STORE,
  rssBytesPer100kKeys: RSS_250_MB,
  scaleVsSmallCpu: 1.1,
  stalls: { bare: 2, allinone: 2, allinonePg: 1 },
};

const verdicts = (rows: Record<string, Row>, inputs: Parameters<typeof computeRatios>[1] = INPUTS) =>
  Object.fromEntries(evaluateChecks(computeRatios(byName(rows), inputs)).map((c) => [c.id, c]));

describe('gateway benchmark targets (issue 32, against the floor row of the same run)', () => {
  it('passes a run that meets every row of the table, and lists each row once', () => {
    const checks = evaluateChecks(computeRatios(byName(GOOD), INPUTS));
    expect(checks.map((c) => [c.id, c.wanted, c.pass])).toEqual([
      ['paid_cpu_vs_floor', '≤ 1.5×', true],
      ['free_cpu_vs_paid', '≤ 1×', true],
      ['free_cpu_vs_floor', '≤ 1.5×', true],
      ['pg_cpu_vs_floor', '≤ 2×', true],
      ['pg_rows', '≤ 1.1', true],
      ['redis_commands', '≤ 1', true],
      ['redis_scripts', '≤ 0.2', true],
      ['scale_cpu', '≤ 1.15×', true],
      ['rss_per_100k_keys', '≤ 300 MB', true],
      ['allinone_added_latency_p99', '≤ +3 ms', true],
      ['allinone_stalls', '≤ 0', true],
      ['allinone_throughput', '≥ 0.9×', true],
      ['allinone_pg_added_latency_p99', '≤ +3 ms', true],
      ['allinone_pg_stalls', '≤ 0', true],
      ['allinone_pg_throughput', '≥ 0.9×', true],
    ]);
  });

  it('holds each limit inclusively and fails just past it', () => {
    const exact = verdicts(
      {
        ...GOOD,
        gateway_paid: { ...GOOD.gateway_paid!, cpu: 90, cpuProxy: 70 },
        gateway_free: { rps: 6_500, cpu: 90, cpuProxy: 70 },
        allinone_paid: { ...GOOD.allinone_paid!, rps: 5_400, p99: 5 },
        allinone_pg_redis_paid: { ...GOOD.allinone_pg_redis_paid!, rps: 5_400, p99: 5 },
      },
      { ...INPUTS, paidStore: { redisCommands: 1, redisScripts: 0.2, pgRowsWritten: 1.1 }, scaleVsSmallCpu: 1.15 },
    );
    for (const id of [
      'paid_cpu_vs_floor',
      'free_cpu_vs_paid',
      'free_cpu_vs_floor',
      'pg_cpu_vs_floor',
      'redis_commands',
    ]) {
      expect(exact[id]!.pass, id).toBe(true);
    }
    for (const id of [
      'redis_scripts',
      'pg_rows',
      'scale_cpu',
      'allinone_added_latency_p99',
      'allinone_throughput',
      'allinone_pg_added_latency_p99',
      'allinone_pg_throughput',
    ]) {
      expect(exact[id]!.pass, id).toBe(true);
    }
    const over = verdicts(
      {
        ...GOOD,
        gateway_paid: { ...GOOD.gateway_paid!, cpu: 91, cpuProxy: 69 },
        gateway_free: { rps: 6_500, cpu: 92, cpuProxy: 80 },
        allinone_paid: { ...GOOD.allinone_paid!, rps: 5_390, p99: 5.1 },
        allinone_pg_redis_paid: { ...GOOD.allinone_pg_redis_paid!, rps: 5_390, p99: 5.1 },
      },
      {
        paidStore: { redisCommands: 1.01, redisScripts: 0.21, pgRowsWritten: 1.11 },
        rssBytesPer100kKeys: 301 * 1024 * 1024,
        scaleVsSmallCpu: 1.16,
        stalls: { bare: 2, allinone: 3, allinonePg: 3 },
      },
    );
    expect(
      Object.values(over)
        .filter((c) => c.pass !== false)
        .map((c) => c.id),
    ).toEqual([]);
  });

  it('shows the absolute figures beside the ratios', () => {
    const v = verdicts(GOOD);
    expect(v.paid_cpu_vs_floor).toMatchObject({ measured: 1.4, detail: '84 µs over the floor’s 60 µs' });
    expect(v.pg_cpu_vs_floor).toMatchObject({ measured: 2, detail: '20 µs over 10 µs' });
    expect(v.allinone_stalls).toMatchObject({ measured: 0, detail: '2 against the bare proxy’s 2' });
    // The live heap (heap snapshots) beside the RSS figure the target is stated in.
    const heap = verdicts(GOOD, { ...INPUTS, heapBytesPer100kKeys: 150 * 1024 * 1024 });
    expect(heap.rss_per_100k_keys).toMatchObject({
      measured: 250,
      detail: 'live heap 150 MB per 100k keys (heap snapshots)',
    });
    // A free call dearer than the paid one fails even under 1.5× the floor.
    const dear = verdicts({ ...GOOD, gateway_free: { rps: 6_500, cpu: 85, cpuProxy: 65 } });
    expect([dear.free_cpu_vs_paid!.pass, dear.free_cpu_vs_floor!.pass]).toEqual([false, true]);
  });

  it('reports a target as not measured when its row, the store counts or the extended rows are missing', () => {
    const rows = { ...GOOD };
    delete rows.allinone_paid;
    delete rows.allinone_pg_redis_paid;
    delete rows.floor_node_gateway;
    const checks = evaluateChecks(computeRatios(byName(rows), {}));
    const missing = checks.filter((c) => c.pass === null).map((c) => c.id);
    expect(missing).toEqual([
      'paid_cpu_vs_floor',
      'free_cpu_vs_floor',
      'pg_cpu_vs_floor',
      'pg_rows',
      'redis_commands',
      'redis_scripts',
      'scale_cpu',
      'rss_per_100k_keys',
      'allinone_added_latency_p99',
      'allinone_stalls',
      'allinone_throughput',
      'allinone_pg_added_latency_p99',
      'allinone_pg_stalls',
      'allinone_pg_throughput',
    ]);
    expect(checks.find((c) => c.id === 'allinone_stalls')!.detail).toBeUndefined();
  });

  it('feeds the store rows from the median of gateway_paid’s rounds', () => {
    const op = (redisCommands: number, redisScripts: number, pgRowsWritten: number): { store: StoreOpsPerCall } => ({
      store: {
        redisCommands,
        redisScripts,
        pgRowsWritten,
        pgInserted: 0,
        pgUpdated: 0,
        pgInsertedByTable: {},
        redisByCommand: {},
      },
    });
    expect(medianStoreOps([op(3, 0.5, 2), op(1, 0.1, 1), op(2, 0.2, 1.2)])).toEqual({
      redisCommands: 2,
      redisScripts: 0.2,
      pgRowsWritten: 1.2,
    });
    expect(medianStoreOps([{}, {}])).toBeNull();
  });

  it('prints wanted, measured (CPU above bare beside the absolute) and the result in the report', () => {
    const ratios = computeRatios(byName(GOOD), { paidStore: STORE });
    const md = renderMarkdown({
      date: '2026-01-01',
      machine: { cpuModel: 'test', cores: 2, node: 'v24', nginx: 'nginx', wrk: 'wrk', loadAverageAtStart: [0, 0, 0] },
      rounds: 1,
      durationS: 1,
      latencyDurationS: 1,
      rate: 500,
      connections: 32,
      autocannonDurationS: 1,
      autocannonConnections: 10,
      summaries: [...byName(GOOD).values()],
      ratios,
      checks: evaluateChecks(ratios),
      warnings: [],
      verify: { ok: true, details: {} },
      verifyAllInOne: { ok: false, details: { reconcile_ok: false } },
      serviceCpuScope: 'test',
    });
    expect(md).toContain(
      '| paid call: CPU per call ÷ the floor row’s (gateway + Redis + Postgres; aim 1.25×) | ≤ 1.5× | ' +
        '1.4× (84 µs over the floor’s 60 µs) | PASS |',
    );
    expect(md).toContain('| npm start: paid throughput ÷ the gateway process’s | ≥ 0.9× | 0.933× | PASS |');
    expect(md).toContain('| gateway RSS per 100k keys seen | ≤ 300 MB | not measured | not measured |');
    expect(md).toContain('All-in-one: **FAILED**: `{"reconcile_ok":false}`');
  });
});
