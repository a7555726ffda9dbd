// The import-boundary check (`npm run lint:boundaries`, .dependency-cruiser.mjs) fails on a folder loop in core/, an
// upward import and a sideways import between entry points. Each case runs the real depcruise CLI with the project's
// config over a small tree written to a temporary folder; the project's own tree is checked by `npm run lint`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DEPCRUISE = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');
const CONFIG = path.join(ROOT, '.dependency-cruiser.mjs');
const DIRS = ['db', 'core', 'platform', 'api', 'gateway', 'mcp', 'cli', 'activities', 'workflows', 'scripts'];

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Write `files` (path → the relative modules it imports) and run the check over them. */
function check(files: Record<string, string[]>): { status: number | null; output: string } {
  dir = mkdtempSync(path.join(tmpdir(), 'boundaries-'));
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', noEmit: true } }),
  );
  for (const d of DIRS) mkdirSync(path.join(dir, d), { recursive: true });
  for (const [file, imports] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    const body = imports.map((spec, i) => `import { x as x${i} } from '${spec}';\nvoid x${i};\n`).join('');
    writeFileSync(path.join(dir, file), `${body}export const x = 1;\n`);
  }
  const run = spawnSync(process.execPath, [DEPCRUISE, ...DIRS, '--config', CONFIG], { cwd: dir, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('import boundaries', () => {
  /** The check of `files` fails, naming each of `rules` (text or pattern); returns what it printed. */
  function expectFailsNaming(files: Parameters<typeof check>[0], rules: (string | RegExp)[]): string {
    const r = check(files);
    expect(r.status).not.toBe(0);
    for (const rule of rules) expect(r.output).toMatch(rule);
    return r.output;
  }

  it('passes a tree that imports downwards only', () => {
    const r = check({
      'core/errors.ts': [],
      'core/money/cents.ts': ['../errors.js'],
      'core/spend/spend.ts': ['../money/cents.js', '../errors.js'],
      'platform/services.ts': ['../core/spend/spend.js'],
      'api/app.ts': ['../platform/services.js', '../core/spend/spend.js'],
      'mcp/app.ts': ['../api/app.js'],
    });
    expect(r.output).toContain('no dependency violations');
    expect(r.status).toBe(0);
  }, 30_000);

  it('fails on an import loop between two folders of core/', () => {
    expectFailsNaming({ 'core/a/a.ts': ['../b/b.js'], 'core/b/b.ts': ['../c/c.js'], 'core/c/c.ts': ['../a/a.js'] }, [
      'core-folder-cycle',
    ]);
  }, 30_000);

  it('fails on core/ importing platform/ or an entry point, and on db/ importing core/', () => {
    expectFailsNaming(
      {
        'platform/tracing.ts': [],
        'api/app.ts': [],
        'core/a/a.ts': ['../../platform/tracing.js'],
        'core/b/b.ts': ['../../api/app.js'],
        'db/entity.ts': ['../core/b/b.js'],
      },
      ['core-to-platform', 'core-upward', 'db-upward'],
    );
  }, 30_000);

  it('fails on an entry point importing another, beyond the listed exceptions', () => {
    const output = expectFailsNaming(
      {
        'gateway/app.ts': [],
        'gateway/proxy.ts': [],
        'api/app.ts': ['../gateway/app.js'],
        'mcp/app.ts': ['../gateway/app.js', '../gateway/proxy.js'],
      },
      [/entry-point-sideways: api\/app\.ts/, /entry-point-sideways: mcp\/app\.ts → gateway\/proxy\.ts/],
    );
    expect(output).not.toMatch(/mcp\/app\.ts → gateway\/app\.ts/);
  }, 30_000);
});
