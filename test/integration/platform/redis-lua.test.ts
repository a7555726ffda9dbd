// The Redis scripts are .lua files beside their owners (core/redis-lua.ts). Every file in the tree is read by an
// owner when its module loads (no orphan that nothing runs), and every one, its includes resolved, compiles on the
// real Redis (SCRIPT LOAD: a syntax error fails here, not at a call).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { luaFilesRead, luaScript } from '../../../core/redis-lua.js';
import { REDIS_URL, ROOT } from '../../helpers/env.js';
// The owners: importing each reads its scripts (a new owner of .lua files is imported here, or its files are orphans).
import '../../../core/spend/redis-spend-lua.js';
import '../../../core/money/money-rules.js';
import '../../../core/counters/redis-store.js';

/** luacheck (Debian: lua-check) when installed: the lint runs where it is, and is skipped elsewhere. */
const LUACHECK = spawnSync('luacheck', ['--version']).status === 0;

const SKIP = new Set(['node_modules', '.git', '.tools', '.data', '.cache', 'coverage', 'dist']);

function luaFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (SKIP.has(e.name)) return [];
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return luaFiles(full);
    return e.isFile() && e.name.endsWith('.lua') ? [full] : [];
  });
}

describe('the Redis Lua files', () => {
  const files = luaFiles(ROOT);

  it('are all read by an owner module (no orphan)', () => {
    expect(files.length).toBeGreaterThan(10);
    const read = new Set(luaFilesRead());
    const orphans = files.filter((f) => !read.has(f)).map((f) => path.relative(ROOT, f));
    expect(orphans).toEqual([]);
  });

  it('each starts with its header comment', () => {
    for (const f of files) {
      const script = luaScript(`file://${f}`, path.basename(f));
      expect(script.startsWith('-- '), path.relative(ROOT, f)).toBe(true);
    }
  });

  it('each compiles on the real Redis, its includes resolved (SCRIPT LOAD)', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      for (const f of files) {
        const script = luaScript(`file://${f}`, path.basename(f));
        expect(script).not.toMatch(/^-- include:/m);
        await expect(redis.script('LOAD', script), path.relative(ROOT, f)).resolves.toMatch(/^[0-9a-f]{40}$/);
      }
    } finally {
      redis.disconnect();
    }
  });

  // .luacheckrc: Redis's globals, and the names the include files define for the scripts that include them.
  it.skipIf(!LUACHECK)("pass luacheck with the repository's .luacheckrc (no undefined or unused names)", () => {
    const lint = spawnSync('luacheck', ['--no-color', '--codes', ...files.map((f) => path.relative(ROOT, f))], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(lint.stdout).toMatch(/Total: 0 warnings \/ 0 errors/);
    expect(lint.status).toBe(0);
  });
});
