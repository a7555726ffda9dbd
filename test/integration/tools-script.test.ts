// scripts/ensure-tools.sh: skips tools already built at the pinned version, and explains itself when Go is missing.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/env.js';

const run = promisify(execFile);

describe('ensure-tools.sh', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mp-tools-'));
    await mkdir(path.join(dir, 'scripts'));
    await copyFile(path.join(ROOT, 'scripts', 'ensure-tools.sh'), path.join(dir, 'scripts', 'ensure-tools.sh'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('fails with a clear message when Go is missing and a tool is not built', async () => {
    const err = (await run('bash', [path.join(dir, 'scripts', 'ensure-tools.sh')], {
      env: { PATH: '/usr/bin:/bin', HOME: dir },
    }).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(err.code).toBe(1);
    expect(err.stderr).toContain(
      'error: Go is needed to build temporal (github.com/temporalio/cli/cmd/temporal@v1.5.1)',
    );
    expect(err.stderr).toContain('Install Go 1.22 or newer');
  });

  it('skips tools already built at the pinned version, without needing Go', async () => {
    const bin = path.join(dir, '.tools', 'bin');
    await mkdir(bin, { recursive: true });
    for (const [name, version] of [
      ['temporal', 'v1.5.1'],
      ['stripe-mock', 'v0.197.0'],
    ]) {
      await writeFile(path.join(bin, name!), '#!/bin/sh\n', { mode: 0o755 });
      await writeFile(path.join(bin, `.${name}.version`), `${version}\n`);
    }
    const { stdout, stderr } = await run('bash', [path.join(dir, 'scripts', 'ensure-tools.sh')], {
      env: { PATH: '/usr/bin:/bin', HOME: dir },
    });
    expect(stdout + stderr).toBe('');
  });
});
