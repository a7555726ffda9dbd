// `npx svc`, as the README says, on the system's Node (issue 31, section 6). npx installs the repository's own package
// into its cache the first time (a fresh clone's state: an empty npm cache here) and npm checks that package's
// `engines` against the Node running npx: with `>=22.12` a Node 20 system printed `npm warn EBADENGINE` twice. The
// launcher (bin/svc.js) runs the CLI on the project's Node 22+ itself, so `engines` names what it accepts and npx is
// quiet; on an old Node with SVC_NODE=system it refuses as every entry point does (proof that it re-executes rather
// than running the CLI on the old Node).
import { execFile } from 'node:child_process';
import { access, constants, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/env.js';

const run = promisify(execFile);

/** PATH without the project's pinned Node (which the test runner put first): the system's `node` and `npx`. */
const systemPath = () =>
  (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => !dir.includes(`${path.sep}.tools${path.sep}node${path.sep}`))
    .join(path.delimiter);

async function systemNode(): Promise<string> {
  for (const dir of systemPath().split(path.delimiter)) {
    const candidate = path.join(dir, 'node');
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  throw new Error('no node on the system PATH');
}

describe('npx svc on the system Node', () => {
  let cache: string;
  let nodeMajor: number;

  beforeAll(async () => {
    cache = await mkdtemp(path.join(os.tmpdir(), 'mp-npx-cache-'));
    const { stdout } = await run(await systemNode(), ['-p', 'process.versions.node']);
    nodeMajor = Number(stdout.trim().split('.')[0]);
  });
  afterAll(async () => {
    await rm(cache, { recursive: true, force: true });
  });

  const npxSvc = async (args: string[], extra: Record<string, string> = {}) => {
    const env = {
      PATH: systemPath(),
      HOME: process.env.HOME ?? os.homedir(),
      // A fresh clone's state: npx has not installed this checkout yet (and no network is needed for it).
      npm_config_cache: cache,
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
      ...extra,
    };
    try {
      const { stdout, stderr } = await run('npx', ['svc', ...args], { cwd: ROOT, env });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  it('prints the version with no EBADENGINE warning, on a first and a second run', async () => {
    const { version } = (await import('../../../package.json', { with: { type: 'json' } })).default as {
      version: string;
    };
    for (const attempt of ['first', 'second']) {
      const res = await npxSvc(['--version']);
      expect(res.code, `${attempt}: ${res.stderr}`).toBe(0);
      expect(res.stdout.trim()).toBe(version);
      expect(res.stderr, attempt).not.toMatch(/EBADENGINE|Unsupported engine/);
      expect(res.stderr, attempt).not.toMatch(/npm warn/);
    }
  });

  it("runs the CLI on the project's Node: an old system Node with SVC_NODE=system is refused, not used", async () => {
    const res = await npxSvc(['--version'], { SVC_NODE: 'system' });
    if (nodeMajor < 22) {
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('is older than this project supports (Node 22 or newer)');
      expect(res.stdout).toBe('');
    } else {
      expect(res.code, res.stderr).toBe(0);
    }
  });
});
