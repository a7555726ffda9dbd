/**
 * The Redis Lua scripts live in `.lua` files beside their TypeScript owners (core/spend/lua/, core/counters/lua/),
 * each starting with a header comment: what it does, its KEYS and ARGV by name, its reply. An owner reads a script
 * once, when its module loads: `luaScript(import.meta.url, 'lua/admit.lua')`. A missing file or include throws
 * then, at start, not at the first call.
 *
 * The one directive: a line `-- include: NAME.lua` (NAME relative to the including file) is replaced by that file's
 * text, its own includes resolved the same way. Within one script a file is included once: a second include of it
 * (say two helpers that both need `nowMs`) is dropped, so each file can name what it needs. An include cycle is an
 * error. Nothing else is substituted: a value the TypeScript side decides goes to the script in ARGV, so the `.lua`
 * files are the scripts exactly as Redis runs them, apart from the includes (docs/decisions.md, "The Redis scripts
 * as .lua files").
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const INCLUDE = /^-- include: (\S+)\s*$/;
const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** Every `.lua` file read so far (scripts and their includes), by absolute path: the orphan check's list. */
const read = new Map<string, string>();

function readLua(path: string, includedBy: string | undefined): string {
  let text = read.get(path);
  if (text === undefined) {
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      const from = includedBy ? ` (included by ${relative(ROOT, includedBy)})` : '';
      throw new Error(`Redis Lua script ${relative(ROOT, path)} cannot be read${from}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    read.set(path, text);
  }
  return text;
}

function resolve(path: string, includedBy: string | undefined, seen: Set<string>, stack: string[]): string {
  if (stack.includes(path)) {
    throw new Error(`Redis Lua include cycle: ${[...stack, path].map((p) => relative(ROOT, p)).join(' -> ')}`);
  }
  const text = readLua(path, includedBy);
  seen.add(path);
  const lines = text.split('\n').map((line) => {
    const m = INCLUDE.exec(line);
    if (!m) return line;
    const target = join(dirname(path), m[1]!);
    if (seen.has(target) && !stack.includes(target)) return '';
    return resolve(target, path, seen, [...stack, path]);
  });
  return lines.join('\n');
}

const scripts = new Map<string, string>();

/** The script at `file` (relative to the module `ownerUrl`, its `import.meta.url`), its includes resolved. Cached. */
export function luaScript(ownerUrl: string | URL, file: string): string {
  const path = fileURLToPath(new URL(file, ownerUrl));
  let script = scripts.get(path);
  if (script === undefined) {
    script = resolve(path, undefined, new Set(), []);
    scripts.set(path, script);
  }
  return script;
}

/** The absolute paths of every `.lua` file read so far, scripts and includes (test/integration/platform/redis-lua.test.ts). */
export function luaFilesRead(): string[] {
  return [...read.keys()];
}

/** Every script resolved so far, by the absolute path of its file. */
export function luaScriptsResolved(): ReadonlyMap<string, string> {
  return scripts;
}
