// The README and the docs ship with the code (docs/decisions.md, "Docs ship with the code"): every relative link
// resolves to a file inside this repository, so a fresh clone has everything it links to (no `../shared/...`).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FILES = [
  'README.md',
  'bench/README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
/** `[text](target)` and `[text](target "title")`; images too. */
const LINK = /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;

function relativeLinks(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(LINK)]
    .map((m) => m[1]!)
    .filter((href) => !/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith('#') && !href.startsWith('//'));
}

describe('documentation links', () => {
  it.each(FILES)('%s links only to files inside the repository', (file) => {
    const problems: string[] = [];
    for (const href of relativeLinks(file)) {
      const target = path.resolve(path.dirname(path.join(ROOT, file)), decodeURIComponent(href.split('#')[0]!));
      if (target !== ROOT && !target.startsWith(ROOT + path.sep)) problems.push(`${href}: outside the repository`);
      else if (!existsSync(target)) problems.push(`${href}: no such file`);
    }
    expect(problems).toEqual([]);
  });

  it('finds the README’s links (the pattern is not vacuous)', () => {
    expect(relativeLinks('README.md')).toContain('docs/decisions.md');
  });
});
