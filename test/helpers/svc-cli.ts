/** Spawn the `svc` CLI the way `npx svc` does, with only the environment given (no SVC_* leaks in from outside). */
import { execFile } from 'node:child_process';
import { ROOT } from './env.js';

export interface SvcRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runSvc(args: string[], env: Record<string, string>): Promise<SvcRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/svc.js', ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export const shownRun = (r: SvcRun) => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
