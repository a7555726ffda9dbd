// What one gateway call costs its stores, counted rather than timed (issue 23's rows "Redis commands per paid call"
// and "Postgres rows written per paid call"): Redis's INFO commandstats (every command, and the scripts among them)
// and Postgres's pg_stat_user_tables for the gateway's own database (rows inserted, updated, deleted), read before
// and after a run and divided by the calls it made. The Redis figures are exact only on a Redis server the gateway
// has to itself (the benchmark starts one unless BENCH_REDIS_URL is set); Postgres's are per database, so exact on
// the benchmark's throw-away database (its statistics are flushed within a second of a transaction: `storeOps`
// waits that long before reading).
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import { median } from './stats.js';

export interface StoreCounters {
  redisCommands: number;
  redisScripts: number;
  /** Calls per Redis command name (commands run inside scripts included). */
  redisByCommand: Record<string, number>;
  pgInserted: number;
  pgUpdated: number;
  pgDeleted: number;
  /** Rows inserted per table (usage_events, ledger_entries, earning_accruals, ...). */
  pgInsertedByTable: Record<string, number>;
}

export interface StoreOpsPerCall {
  redisCommands: number;
  redisScripts: number;
  /** Per Redis command name, per call (the largest first). */
  redisByCommand: Record<string, number>;
  /** Rows inserted + updated. */
  pgRowsWritten: number;
  pgInserted: number;
  pgUpdated: number;
  pgInsertedByTable: Record<string, number>;
}

/** Commands the measurement itself sends (INFO) or that are not the gateway's work. */
const IGNORED = new Set(['info', 'ping', 'config|get', 'config|resetstat', 'client|setname', 'hello', 'select']);

export async function readCounters(redisUrl: string, databaseUrl: string): Promise<StoreCounters> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await redis.connect();
    await client.connect();
    const stats = await redis.info('commandstats');
    let redisCommands = 0;
    let redisScripts = 0;
    const redisByCommand: Record<string, number> = {};
    for (const line of stats.split('\n')) {
      const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
      if (!m || IGNORED.has(m[1]!)) continue;
      const calls = Number(m[2]);
      redisCommands += calls;
      redisByCommand[m[1]!] = calls;
      if (m[1] === 'evalsha' || m[1] === 'eval' || m[1] === 'fcall' || m[1] === 'evalsha_ro') redisScripts += calls;
    }
    await client.query('select pg_stat_clear_snapshot()');
    const rows = await client.query<{ relname: string; ins: string; upd: string; del: string }>(
      'select relname, n_tup_ins::text as ins, n_tup_upd::text as upd, n_tup_del::text as del from pg_stat_user_tables',
    );
    const byTable: Record<string, number> = {};
    let ins = 0;
    let upd = 0;
    let del = 0;
    for (const r of rows.rows) {
      // A partitioned table's rows are counted on its partitions: name them by their parent's prefix.
      const table = r.relname.replace(/_(p\d{6}|default)$/, '');
      byTable[table] = (byTable[table] ?? 0) + Number(r.ins);
      ins += Number(r.ins);
      upd += Number(r.upd);
      del += Number(r.del);
    }
    return {
      redisCommands,
      redisScripts,
      redisByCommand,
      pgInserted: ins,
      pgUpdated: upd,
      pgDeleted: del,
      pgInsertedByTable: byTable,
    };
  } finally {
    redis.disconnect();
    await client.end().catch(() => undefined);
  }
}

/** Counters read after the drain settles: Postgres's statistics trail a transaction by up to a second. */
export async function readCountersSettled(redisUrl: string, databaseUrl: string): Promise<StoreCounters> {
  await sleep(1_500);
  return readCounters(redisUrl, databaseUrl);
}

export function perCall(before: StoreCounters, after: StoreCounters, calls: number): StoreOpsPerCall {
  const d = (a: number, b: number) => (calls > 0 ? (a - b) / calls : Number.NaN);
  const byTable: Record<string, number> = {};
  for (const [t, n] of Object.entries(after.pgInsertedByTable)) {
    const delta = n - (before.pgInsertedByTable[t] ?? 0);
    if (delta > 0) byTable[t] = Math.round((delta / calls) * 1000) / 1000;
  }
  const byCommand: Record<string, number> = {};
  for (const [c, n] of Object.entries(after.redisByCommand)) {
    const delta = n - (before.redisByCommand[c] ?? 0);
    if (delta > 0) byCommand[c] = Math.round((delta / calls) * 1000) / 1000;
  }
  const redisByCommand = Object.fromEntries(Object.entries(byCommand).sort((a, b) => b[1] - a[1]));
  return {
    redisCommands: d(after.redisCommands, before.redisCommands),
    redisByCommand,
    redisScripts: d(after.redisScripts, before.redisScripts),
    pgRowsWritten: d(after.pgInserted + after.pgUpdated, before.pgInserted + before.pgUpdated),
    pgInserted: d(after.pgInserted, before.pgInserted),
    pgUpdated: d(after.pgUpdated, before.pgUpdated),
    pgInsertedByTable: byTable,
  };
}

/** A row's store operations per call, medians across its rounds; null when none were read. */
export function medianStoreOps(
  rounds: readonly { store?: StoreOpsPerCall }[],
): { redisCommands: number; redisScripts: number; pgRowsWritten: number } | null {
  const ops = rounds.map((r) => r.store).filter((s): s is StoreOpsPerCall => s !== undefined);
  if (ops.length === 0) return null;
  const m = (f: (s: StoreOpsPerCall) => number) => median(ops.map(f));
  return {
    redisCommands: m((s) => s.redisCommands),
    redisScripts: m((s) => s.redisScripts),
    pgRowsWritten: m((s) => s.pgRowsWritten),
  };
}

/** The Markdown table of the gateway rows' store operations per call (medians across rounds). */
export function renderStoreOps(rounds: Map<string, { store?: StoreOpsPerCall }[]>): string {
  const rows: string[] = [];
  for (const [name, rs] of rounds) {
    const ops = rs.map((r) => r.store).filter((s): s is StoreOpsPerCall => s !== undefined);
    if (ops.length === 0) continue;
    const m = (f: (s: StoreOpsPerCall) => number) => median(ops.map(f)).toFixed(2);
    const last = ops[ops.length - 1]!.pgInsertedByTable;
    const tables = Object.entries(last)
      .map(([t, n]) => `${t} ${n}`)
      .join(', ');
    rows.push(
      `| ${name} | ${m((s) => s.redisCommands)} | ${m((s) => s.redisScripts)} | ${m((s) => s.pgRowsWritten)} | ` +
        `${m((s) => s.pgInserted)} / ${m((s) => s.pgUpdated)} | ${tables} |`,
    );
  }
  if (rows.length === 0) return '';
  return [
    '',
    '### Store operations per call (capacity runs, medians)',
    '',
    '| row | Redis commands | Redis scripts | Postgres rows written | inserted / updated | inserted per table |',
    '| --- | ---: | ---: | ---: | ---: | --- |',
    ...rows,
    '',
    "Redis: INFO commandstats of the gateway's own redis-server (every command, scripts' inner commands included) ÷ " +
      "calls; Postgres: pg_stat_user_tables of the benchmark's database (rows inserted + updated) ÷ calls.",
    '',
  ].join('\n');
}
