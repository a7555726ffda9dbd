// The set-up scripts `npm start` and `npm test` share. ensure-tools.sh: skips tools already built at the pinned
// version, explains itself when Go is missing, and says what it builds and that it is still going during the long
// build. ensure-deps.sh: `npm ci` when node_modules does not match package-lock.json, silence when it does.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/env.js';
import { waitFor } from '../../helpers/ports.js';

const run = promisify(execFile);

async function copyScript(dir: string, name: string): Promise<string> {
  await mkdir(path.join(dir, 'scripts'), { recursive: true });
  await copyFile(path.join(ROOT, 'scripts', name), path.join(dir, 'scripts', name));
  return path.join(dir, 'scripts', name);
}

describe('ensure-tools.sh', () => {
  let dir: string;
  let script: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mp-tools-'));
    script = await copyScript(dir, 'ensure-tools.sh');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('fails with a clear message when Go is missing and a tool is not built', async () => {
    const err = (await run('bash', [script], {
      env: { PATH: '/usr/bin:/bin', HOME: dir },
    }).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(err.code).toBe(1);
    expect(err.stderr).toContain(
      'error: Go is needed to build temporal (github.com/temporalio/cli/cmd/temporal@v1.5.1)',
    );
    expect(err.stderr).toContain('Install Go 1.22 or newer');
  });

  it('says what it builds, that it happens once and roughly how long, then that it is still going', async () => {
    // A module proxy that accepts connections and never answers: the real `go install` waits on it, as it would
    // on a slow network, and the script must keep saying what it is doing.
    const sockets: net.Socket[] = [];
    const proxy = net.createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const work = await mkdtemp(path.join(os.tmpdir(), 'mp-gobuild-'));
    const child = spawn('bash', [script], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH,
        HOME: work,
        GOPATH: path.join(work, 'gopath'),
        GOMODCACHE: path.join(work, 'mod'),
        GOCACHE: path.join(work, 'cache'),
        GOPROXY: `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`,
        GOSUMDB: 'off',
        GOTOOLCHAIN: 'local',
        ENSURE_TOOLS_PROGRESS_SECONDS: '1',
      },
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    try {
      await waitFor(() => Promise.resolve(/still building temporal \(\d+ s so far\)[\s\S]*still building/.test(out)), {
        timeoutMs: 20_000,
        what: `two progress lines (output so far: ${JSON.stringify(out)})`,
      });
      const lines = out.trim().split('\n');
      expect(lines[0]).toBe(
        'Building temporal v1.5.1 (the Temporal dev server and Web UI for the embedded mode) into .tools/bin/ with ' +
          'go install: once only, later starts skip it; usually 3 to 10 minutes (downloads its Go modules, then compiles)...',
      );
      expect(lines[1]).toMatch(/^ {2}\.\.\. still building temporal \(\d+ s so far\)$/);
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
      await new Promise((resolve) => child.once('close', resolve));
      for (const s of sockets) s.destroy();
      proxy.close();
      await rm(work, { recursive: true, force: true });
    }
    await expect(stat(path.join(dir, '.tools', 'bin', '.temporal.version'))).rejects.toThrow();
  });

  it('skips tools already built at the pinned version, without needing Go', async () => {
    const bin = path.join(dir, '.tools', 'bin');
    await mkdir(bin, { recursive: true });
    for (const [name, version] of [
      ['temporal', 'v1.5.1'],
      ['stripe-mock', 'v0.197.0'],
      ['toxiproxy-server', 'v2.5.0'],
    ]) {
      await writeFile(path.join(bin, name!), '#!/bin/sh\n', { mode: 0o755 });
      await writeFile(path.join(bin, `.${name}.version`), `${version}\n`);
    }
    const { stdout, stderr } = await run('bash', [script], {
      env: { PATH: '/usr/bin:/bin', HOME: dir },
    });
    expect(stdout + stderr).toBe('');
  });

  it('--runtime (npm start) never builds Toxiproxy, which only the tests need (issue 22)', async () => {
    const bin = path.join(dir, '.tools', 'bin');
    await rm(path.join(bin, 'toxiproxy-server'), { force: true });
    await rm(path.join(bin, '.toxiproxy-server.version'), { force: true });
    // Go is not on this PATH: building anything would fail loudly.
    const { stdout, stderr } = await run('bash', [script, '--runtime'], {
      env: { PATH: '/usr/bin:/bin', HOME: dir },
    });
    expect(stdout + stderr).toBe('');
    const all = (await run('bash', [script], { env: { PATH: '/usr/bin:/bin', HOME: dir } }).catch(
      (e: unknown) => e,
    )) as { code: number; stderr: string };
    expect(all.stderr).toContain('error: Go is needed to build toxiproxy-server');
  });
});

describe('ensure-deps.sh', () => {
  // A project with one real dependency pinned by a real lock entry (zod, copied from our own lock), installed with
  // the real npm; prefer-offline serves it from the npm cache `npm test` already filled.
  let dir: string;
  let script: string;
  const env = () => ({ PATH: process.env.PATH, HOME: process.env.HOME, npm_config_prefer_offline: 'true' });
  const lockSum = async () =>
    createHash('sha256')
      .update(await readFile(path.join(dir, 'package-lock.json')))
      .digest('hex');

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mp-deps-'));
    script = await copyScript(dir, 'ensure-deps.sh');
    const ourLock = JSON.parse(await readFile(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version: string }>;
    };
    const zod = ourLock.packages['node_modules/zod']!;
    const pkg = { name: 'fixture', version: '1.0.0', private: true, dependencies: { zod: zod.version } };
    await writeFile(path.join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
    await writeFile(
      path.join(dir, 'package-lock.json'),
      JSON.stringify(
        {
          name: 'fixture',
          version: '1.0.0',
          lockfileVersion: 3,
          requires: true,
          packages: { '': { ...pkg, private: undefined }, 'node_modules/zod': zod },
        },
        null,
        2,
      ),
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('on a fresh clone, says what it does, runs npm ci and stamps node_modules with the lock hash', async () => {
    const { stdout } = await run('bash', [script], { env: env() });
    expect(stdout).toContain(
      'Installing npm dependencies with npm ci (first run: no node_modules yet; about a minute, once per lock file change)...',
    );
    expect(JSON.parse(await readFile(path.join(dir, 'node_modules', 'zod', 'package.json'), 'utf8')).name).toBe('zod');
    expect((await readFile(path.join(dir, 'node_modules', '.ci-stamp'), 'utf8')).trim()).toBe(await lockSum());
  });

  it('says nothing and installs nothing when node_modules matches the lock', async () => {
    await writeFile(path.join(dir, 'node_modules', 'marker'), 'still here');
    const { stdout, stderr } = await run('bash', [script], { env: env() });
    expect(stdout + stderr).toBe('');
    expect(await readFile(path.join(dir, 'node_modules', 'marker'), 'utf8')).toBe('still here');
  });

  it('reinstalls when the lock changed', async () => {
    const lockPath = path.join(dir, 'package-lock.json');
    await writeFile(lockPath, `${(await readFile(lockPath, 'utf8')).trimEnd()}\n\n`);
    const { stdout } = await run('bash', [script], { env: env() });
    expect(stdout).toContain('(node_modules does not match package-lock.json;');
    await expect(stat(path.join(dir, 'node_modules', 'marker'))).rejects.toThrow(); // npm ci starts from scratch
    expect((await readFile(path.join(dir, 'node_modules', '.ci-stamp'), 'utf8')).trim()).toBe(await lockSum());
  });
});
