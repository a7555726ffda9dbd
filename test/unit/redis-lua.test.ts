// The loader of the Redis Lua files (core/redis-lua.ts): the include directive, once per script, and the errors at
// start for a missing file, a missing include and a cycle.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { luaScript } from '../../core/redis-lua.js';

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'redis-lua-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return pathToFileURL(path.join(dir, 'owner.ts')).href;
}

describe('luaScript', () => {
  it('replaces each include line by the file, resolved in turn, and includes a file once per script', () => {
    const owner = tree({
      'clock.lua': '-- the clock\nlocal function now() return 1 end\n',
      'version.lua': '-- include: clock.lua\nlocal function version() return now() end\n',
      'main.lua': '-- main\n-- include: clock.lua\n-- include: version.lua\nreturn version()\n',
    });
    expect(luaScript(owner, 'main.lua')).toBe(
      '-- main\n-- the clock\nlocal function now() return 1 end\n\n\nlocal function version() return now() end\n\nreturn version()\n',
    );
  });

  it('reads a file once and returns the same text after', () => {
    const owner = tree({ 'a.lua': 'return 1\n' });
    expect(luaScript(owner, 'a.lua')).toBe('return 1\n');
    expect(luaScript(owner, 'a.lua')).toBe('return 1\n');
  });

  it('names a missing script, and a missing include with the file that includes it', () => {
    const owner = tree({ 'a.lua': '-- include: gone.lua\nreturn 1\n' });
    expect(() => luaScript(owner, 'missing.lua')).toThrow(/missing\.lua cannot be read/);
    expect(() => luaScript(owner, 'a.lua')).toThrow(/gone\.lua cannot be read \(included by .*a\.lua\)/);
  });

  it('refuses an include cycle', () => {
    const owner = tree({ 'a.lua': '-- include: b.lua\n', 'b.lua': '-- include: a.lua\n' });
    expect(() => luaScript(owner, 'a.lua')).toThrow(/include cycle: .*a\.lua -> .*b\.lua -> .*a\.lua/);
  });
});
