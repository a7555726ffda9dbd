// The ledger service names every writer of ledger rows (DESIGN.md, Money): the files that insert into
// ledger_entries or post through LedgerService are exactly the ones LEDGER_WRITERS lists, so a new writer cannot land
// unnamed and the list cannot go stale. Tests are not writers (they seed balances through `post`).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEDGER_WRITERS } from '../../core/billing/ledger.service.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCANNED = ['core', 'platform', 'api', 'gateway', 'mcp', 'activities', 'workflows', 'scripts', 'bench', 'db'];
const SQL_WRITE = /insert\s+into\s+ledger_entries\b/i;
const POST = /\bledger\s*\.\s*post\s*\(/;

function sources(dir: string): string[] {
  const out: string[] = [];
  let entries;
  try {
    entries = readdirSync(path.join(ROOT, dir), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory() && e.name !== 'node_modules') out.push(...sources(rel));
    else if (e.isFile() && /\.(ts|mts|js|sql)$/.test(e.name)) out.push(rel);
  }
  return out;
}

describe('ledger writers', () => {
  const found = new Map<string, 'sql' | 'post'>();
  for (const file of SCANNED.flatMap(sources)) {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    if (SQL_WRITE.test(text)) found.set(file, 'sql');
    else if (POST.test(text)) found.set(file, 'post');
  }

  it('every file that writes ledger rows is named in LEDGER_WRITERS, by how it writes them', () => {
    // A benchmark harness named before its branch lands may be absent; every other named file must exist and write.
    const named = Object.fromEntries(
      Object.entries(LEDGER_WRITERS)
        .filter(([file]) => !file.startsWith('bench/') || existsSync(path.join(ROOT, file)))
        .map(([file, w]) => [file, w.via]),
    );
    const unnamed = [...found.keys()].filter((f) => !(f in named));
    expect(unnamed, 'write ledger rows but are not named in core/billing/ledger.service.ts').toEqual([]);
    expect(Object.fromEntries(found)).toEqual(named);
  });
});
