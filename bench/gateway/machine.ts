// What the figures were measured on, so results from different machines are not compared blindly.
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import { CLK_TCK } from './cpu.js';
import { nginxVersion } from './nginx.js';
import { round } from './stats.js';
import { wrkVersion } from './wrk.js';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  os: string;
  kernel: string;
  node: string;
  nginx: string;
  wrk: string;
  clockTicksPerSecond: number;
  /** 1/5/15-minute load averages when the run started: above ~0.5 per core, other work was competing. */
  loadAverageAtStart: number[];
}

function osName(): string {
  try {
    const match = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'));
    return match?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

export function machineInfo(): MachineInfo {
  return {
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    memoryGiB: round(totalmem() / 2 ** 30, 1),
    os: osName(),
    kernel: release(),
    node: process.version,
    nginx: nginxVersion(),
    wrk: wrkVersion(),
    clockTicksPerSecond: CLK_TCK,
    loadAverageAtStart: loadavg().map((l) => round(l, 2)),
  };
}
