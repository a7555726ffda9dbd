// CPU accounting from /proc: who spent how much CPU during a measurement window.
//
// Each process's cost is utime+stime+cutime+cstime from /proc/<pid>/stat. Including the children's fields
// (cutime/cstime: CPU of exited children that the parent has reaped) is what makes short-lived processes count:
// a postgres backend that exits inside the window disappears from the "after" snapshot, but its CPU shows up in the
// postmaster's cstime/cutime, so sum(after) - sum(before) over a group is still that group's CPU in the window.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { CpuWindow } from './types.js';

/** Clock ticks per second of the /proc time fields (almost always 100). */
export const CLK_TCK = readClockTicks();

function readClockTicks(): number {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
}

interface ProcEntry {
  ppid: number;
  comm: string;
  /** utime + stime + cutime + cstime, in clock ticks. */
  ticks: number;
}

export interface ProcSnapshot {
  procs: Map<number, ProcEntry>;
  /** Non-idle CPU of the whole machine (all cores), from /proc/stat, in clock ticks. */
  machineBusyTicks: number;
}

/** Reads every process's stat line and the machine's CPU line. A few hundred small reads: about a millisecond. */
export function snapshot(): ProcSnapshot {
  const procs = new Map<number, ProcEntry>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited between readdir and read
    }
    const entry = parseStat(stat);
    if (entry) procs.set(Number(name), entry);
  }
  return { procs, machineBusyTicks: machineBusyTicks() };
}

/** user + nice + system + irq + softirq + steal of the "cpu" line: everything but idle and iowait. */
function machineBusyTicks(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return user + nice + system + irq + softirq + steal;
}

/** Parses /proc/<pid>/stat. comm is in parentheses and may itself contain spaces or ')', so split at the last ')'. */
export function parseStat(stat: string): ProcEntry | null {
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  // Fields after comm, numbered from field 3 (state): ppid is field 4, utime..cstime are fields 14..17.
  const fields = stat
    .slice(close + 2)
    .split(' ')
    .map((f) => Number(f));
  const field = (n: number): number => fields[n - 3] ?? 0;
  return { ppid: field(4), comm: stat.slice(open + 1, close), ticks: field(14) + field(15) + field(16) + field(17) };
}

/** The roots and all their descendants present in the snapshot. */
export function withDescendants(snap: ProcSnapshot, roots: readonly number[]): Set<number> {
  const result = new Set(roots.filter((pid) => snap.procs.has(pid)));
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, entry] of snap.procs) {
      if (!result.has(pid) && result.has(entry.ppid)) {
        result.add(pid);
        grew = true;
      }
    }
  }
  return result;
}

function byComm(snap: ProcSnapshot, comm: string): Set<number> {
  const result = new Set<number>();
  for (const [pid, entry] of snap.procs) if (entry.comm === comm) result.add(pid);
  return result;
}

function sumTicks(snap: ProcSnapshot, pids: Set<number>): number {
  let total = 0;
  for (const pid of pids) total += snap.procs.get(pid)?.ticks ?? 0;
  return total;
}

const ticksToUs = (ticks: number): number => (ticks * 1e6) / CLK_TCK;

/** What each part of the window is made of: the pids are re-resolved (with descendants) in both snapshots. */
export interface CpuGroups {
  target: readonly number[];
  upstream: readonly number[];
  /** Root pids of the Redis/Postgres the gateway uses; null: every redis-server / postgres process on the machine. */
  redis: readonly number[] | null;
  postgres: readonly number[] | null;
}

/**
 * CPU-µs per group between two snapshots. `loadgenUs` comes from the generator itself (wrk has exited by the time of
 * the second snapshot, so /proc cannot see it any more).
 */
export function cpuWindow(before: ProcSnapshot, after: ProcSnapshot, groups: CpuGroups, loadgenUs: number): CpuWindow {
  const delta = (select: (snap: ProcSnapshot) => Set<number>): number =>
    Math.max(0, ticksToUs(sumTicks(after, select(after)) - sumTicks(before, select(before))));
  const parts = {
    target: delta((snap) => withDescendants(snap, groups.target)),
    redis: delta((snap) => (groups.redis ? withDescendants(snap, groups.redis) : byComm(snap, 'redis-server'))),
    postgres: delta((snap) => (groups.postgres ? withDescendants(snap, groups.postgres) : byComm(snap, 'postgres'))),
    upstream: delta((snap) => withDescendants(snap, groups.upstream)),
    loadgen: loadgenUs,
  };
  const accounted = parts.target + parts.redis + parts.postgres + parts.upstream + parts.loadgen;
  const busy = ticksToUs(after.machineBusyTicks - before.machineBusyTicks);
  return { ...parts, other: Math.max(0, busy - accounted) };
}

/** The figure the CPU target is about: everything but the upstream and the load generator. */
export const chargedUs = (cpu: CpuWindow): number => cpu.target + cpu.redis + cpu.postgres;

export function perRequest(cpu: CpuWindow, requests: number): CpuWindow {
  const per = (us: number): number => (requests > 0 ? us / requests : 0);
  return {
    target: per(cpu.target),
    redis: per(cpu.redis),
    postgres: per(cpu.postgres),
    upstream: per(cpu.upstream),
    loadgen: per(cpu.loadgen),
    other: per(cpu.other),
  };
}
