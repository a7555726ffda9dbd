// Capacity with wrk: a closed loop of `connections` keep-alive connections on one thread, as fast as the target
// answers. wrk is C and cheap per request, so on a small machine it leaves the most CPU to the target.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBinary, runToCompletion } from './proc.js';
import type { BenchTarget } from './types.js';

export interface WrkOptions {
  durationS: number;
  connections: number;
  threads: number;
}

export interface WrkOutput {
  requests: number;
  durationS: number;
  requestsPerSec: number;
  /** wrk's "Non-2xx or 3xx responses" count. */
  non2xx: number;
  socketErrors: { connect: number; read: number; write: number; timeout: number };
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /** CPU the wrk process used (user + system), from the shell's `times`. */
  cpuUs: number;
}

export function wrkVersion(): string {
  // `wrk -v` prints "wrk debian/4.1.0-3+b2 [epoll] Copyright ..." and the usage, then exits 1.
  const out = spawnSync(findBinary('wrk'), ['-v'], { encoding: 'utf8' });
  const first = `${out.stdout}${out.stderr}`.split('\n')[0] ?? '';
  return first.replace(/\s*Copyright.*$/, '').trim() || 'unknown';
}

/** Lua for what wrk cannot take on the command line: a method and a body. Long brackets need no escaping. */
function luaScript(target: BenchTarget): string | null {
  if (target.wrkScript !== undefined) return target.wrkScript;
  if ((target.method ?? 'GET') === 'GET' && target.body === undefined) return null;
  let level = '=';
  while (target.body?.includes(`]${level}]`)) level += '=';
  const lines = [`wrk.method = "${target.method ?? 'GET'}"`];
  if (target.body !== undefined) lines.push(`wrk.body = [${level}[${target.body}]${level}]`);
  return `${lines.join('\n')}\n`;
}

export async function runWrk(target: BenchTarget, options: WrkOptions): Promise<WrkOutput> {
  const wrk = findBinary('wrk');
  const args = [
    `-t${options.threads}`,
    `-c${options.connections}`,
    `-d${options.durationS}s`,
    '--latency',
    '--timeout',
    '5s',
  ];
  for (const [name, value] of Object.entries(target.headers ?? {})) args.push('-H', `${name}: ${value}`);
  const script = luaScript(target);
  let scriptDir: string | null = null;
  if (script) {
    scriptDir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
    const file = join(scriptDir, 'request.lua');
    writeFileSync(file, script);
    args.push('-s', file);
  }
  args.push(target.url);

  try {
    // Through bash so `times` can report wrk's CPU: wrk has exited (and left /proc) by the time we could look.
    const run = await runToCompletion('wrk', 'bash', [
      '-c',
      'wrk="$1"; shift; "$wrk" "$@"; rc=$?; times >&2; exit $rc',
      'bash',
      wrk,
      ...args,
    ]);
    if (run.code !== 0) throw new Error(`wrk failed (${run.code}) on ${target.name}:\n${run.stdout}\n${run.stderr}`);
    return { ...parseWrk(run.stdout), cpuUs: parseTimesChildren(run.stderr) };
  } finally {
    if (scriptDir) rmSync(scriptDir, { recursive: true, force: true });
  }
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "812.00us", "1.20ms", "2.01s" -> milliseconds. */
export function parseDuration(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m|h)$/.exec(text.trim());
  if (!match?.[1] || !match[2]) return Number.NaN;
  return Number(match[1]) * (UNIT_MS[match[2]] ?? Number.NaN);
}

export function parseWrk(stdout: string): Omit<WrkOutput, 'cpuUs'> {
  const num = (re: RegExp): number => {
    const match = re.exec(stdout);
    return match?.[1] ? Number(match[1]) : 0;
  };
  const dist = (pct: string): number => {
    const match = new RegExp(`^\\s+${pct}%\\s+(\\S+)`, 'm').exec(stdout);
    return match?.[1] ? parseDuration(match[1]) : Number.NaN;
  };
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m)/.exec(stdout);
  if (!total?.[1] || !total[2] || !total[3]) throw new Error(`unexpected wrk output:\n${stdout}`);
  const maxMatch = /^\s+Latency\s+\S+\s+\S+\s+(\S+)/m.exec(stdout);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  return {
    requests: Number(total[1]),
    durationS: parseDuration(`${total[2]}${total[3]}`) / 1000,
    requestsPerSec: num(/Requests\/sec:\s+([\d.]+)/),
    non2xx: num(/Non-2xx or 3xx responses: (\d+)/),
    socketErrors: {
      connect: Number(socket?.[1] ?? 0),
      read: Number(socket?.[2] ?? 0),
      write: Number(socket?.[3] ?? 0),
      timeout: Number(socket?.[4] ?? 0),
    },
    latencyMs: {
      p50: dist('50'),
      p90: dist('90'),
      p99: dist('99'),
      max: maxMatch?.[1] ? parseDuration(maxMatch[1]) : Number.NaN,
    },
  };
}

/** The second line of bash's `times` ("0m1.234s 0m0.567s"): user and system CPU of the shell's children. */
export function parseTimesChildren(stderr: string): number {
  const lines = stderr.trim().split('\n');
  const match = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/.exec(lines[lines.length - 1] ?? '');
  if (!match) return Number.NaN;
  const [, um, us, sm, ss] = match.map(Number) as [number, number, number, number, number];
  return Math.round((um * 60 + us + sm * 60 + ss) * 1e6);
}
