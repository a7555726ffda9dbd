// A first `npm start` (scripts/ensure-deps.sh: `npm ci`) prints no unexplained install-script warnings (issue 31,
// section 6). npm 11 lists every dependency whose install script package.json's `allowScripts` does not decide; ours
// decides each one (README, "Install scripts"). The lock-file check fails as soon as a dependency with an install
// script arrives undecided; the fixture runs the real ensure-deps.sh with the real npm to show npm honours the field.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir, copyFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/env.js';

const run = promisify(execFile);

interface Lock {
  packages: Record<string, { version?: string; hasInstallScript?: boolean }>;
}

const readJson = async <T>(file: string): Promise<T> => JSON.parse(await readFile(file, 'utf8')) as T;
/** `node_modules/a/node_modules/@s/b` → `@s/b`. */
const nameOf = (lockPath: string) => lockPath.slice(lockPath.lastIndexOf('node_modules/') + 'node_modules/'.length);

describe('install scripts', () => {
  it('package.json decides every install script in package-lock.json, and names nothing else', async () => {
    const lock = await readJson<Lock>(path.join(ROOT, 'package-lock.json'));
    const { allowScripts = {} } = await readJson<{ allowScripts?: Record<string, boolean> }>(
      path.join(ROOT, 'package.json'),
    );
    const withScripts = [
      ...new Set(
        Object.entries(lock.packages)
          .filter(([, entry]) => entry.hasInstallScript)
          .map(([p]) => nameOf(p)),
      ),
    ].sort();
    expect(withScripts.length).toBeGreaterThan(0);
    // A name-only entry covers every version (the lock records no `resolved` URL, so npm cannot pin one).
    expect(
      withScripts.filter((name) => !(name in allowScripts)),
      'undecided: add them to allowScripts',
    ).toEqual([]);
    expect(Object.keys(allowScripts).sort()).toEqual(withScripts);
    // What the README says: the two that build or check native binaries run, the rest do not.
    expect(allowScripts).toEqual({ esbuild: true, '@swc/core': true, protobufjs: false, '@scarf/scarf': false });
  });

  describe('npm ci through ensure-deps.sh', () => {
    // A project with one dependency that has an install script (@scarf/scarf, with our lock's entry), installed with
    // the real npm from the cache `npm test` already filled; DO_NOT_TRACK keeps its telemetry quiet if it ever runs.
    let dir: string;
    const env = () => ({
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      npm_config_prefer_offline: 'true',
      DO_NOT_TRACK: '1',
    });

    async function fixture(name: string, allowScripts?: Record<string, boolean>): Promise<string> {
      const at = path.join(dir, name);
      await mkdir(path.join(at, 'scripts'), { recursive: true });
      await copyFile(path.join(ROOT, 'scripts', 'ensure-deps.sh'), path.join(at, 'scripts', 'ensure-deps.sh'));
      const lock = await readJson<Lock>(path.join(ROOT, 'package-lock.json'));
      const scarf = lock.packages['node_modules/@scarf/scarf']!;
      const pkg = { name, version: '1.0.0', private: true, dependencies: { '@scarf/scarf': scarf.version } };
      await writeFile(path.join(at, 'package.json'), JSON.stringify({ ...pkg, ...(allowScripts && { allowScripts }) }));
      const packages = { '': { ...pkg, private: undefined }, 'node_modules/@scarf/scarf': scarf };
      await writeFile(
        path.join(at, 'package-lock.json'),
        JSON.stringify({ name, version: '1.0.0', lockfileVersion: 3, requires: true, packages }),
      );
      return at;
    }

    const ensureDeps = async (at: string) => {
      const { stdout, stderr } = await run('bash', [path.join(at, 'scripts', 'ensure-deps.sh')], { env: env() });
      return stdout + stderr;
    };

    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'mp-install-scripts-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('warns about nothing when allowScripts decides the script', async () => {
      const at = await fixture('decided', { '@scarf/scarf': false });
      const out = await ensureDeps(at);
      expect(out).toContain('Installing npm dependencies with npm ci');
      expect(out).not.toMatch(/install-scripts|allowScripts/);
      expect((await readJson<{ name: string }>(path.join(at, 'node_modules/@scarf/scarf/package.json'))).name).toBe(
        '@scarf/scarf',
      );
    });

    it('npm 11.16+ warns when nothing decides it (what a first `npm start` printed before)', async () => {
      const [major = 0, minor = 0] = (await run('npm', ['--version'], { env: env() })).stdout
        .trim()
        .split('.')
        .map(Number);
      const out = await ensureDeps(await fixture('undecided'));
      if (major > 11 || (major === 11 && minor >= 16)) {
        expect(out).toMatch(/npm warn install-scripts .*@scarf\/scarf/s);
      } else {
        expect(out).not.toMatch(/install-scripts/); // an npm without the mechanism has nothing to say
      }
    });
  });
});
