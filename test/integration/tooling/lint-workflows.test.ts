// `npm run lint` fences workflows/ off from Node built-ins (they would break deterministic replay).
// The probes are real files under workflows/, linted by the project's own ESLint config in one run.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/env.js';

const PROBES = {
  nodePrefixed: "import { readFileSync } from 'node:fs';\nexport const f = (): Buffer => readFileSync('x');\n",
  bareBuiltin: "import crypto from 'crypto';\nexport const f = (): string => crypto.randomUUID();\n",
  client: "import { Client } from '@temporalio/client';\nexport const f = (): typeof Client => Client;\n",
  clean:
    "import { sleep } from '@temporalio/workflow';\nexport async function w(): Promise<void> {\n  await sleep(1);\n}\n",
};

interface LintResult {
  filePath: string;
  messages: { ruleId: string | null; message: string }[];
}

describe('workflow lint fence', () => {
  const tag = randomBytes(4).toString('hex');
  const files = Object.fromEntries(
    Object.keys(PROBES).map((name) => [name, path.join(ROOT, 'workflows', `lint-probe-${tag}-${name}.ts`)]),
  ) as Record<keyof typeof PROBES, string>;
  let results: Record<string, LintResult['messages']> = {};
  let exitCode = 0;

  beforeAll(async () => {
    for (const [name, file] of Object.entries(files)) await writeFile(file, PROBES[name as keyof typeof PROBES]);
    let stdout: string;
    try {
      ({ stdout } = await promisify(execFile)('npx', ['eslint', '--format', 'json', ...Object.values(files)], {
        cwd: ROOT,
      }));
    } catch (err) {
      ({ stdout } = err as { stdout: string });
      exitCode = (err as { code: number }).code;
    }
    results = Object.fromEntries((JSON.parse(stdout) as LintResult[]).map((r) => [r.filePath, r.messages]));
  });
  afterAll(async () => {
    await Promise.all(Object.values(files).map((f) => rm(f, { force: true })));
  });

  it('exits non-zero', () => {
    expect(exitCode).toBe(1);
  });

  it.each([
    ['nodePrefixed', 'node:fs'],
    ['bareBuiltin', 'crypto'],
    ['client', '@temporalio/client'],
  ] as const)('refuses the %s import of %s', (probe, name) => {
    const messages = results[files[probe]] ?? [];
    expect(messages.map((m) => m.ruleId)).toContain('no-restricted-imports');
    expect(messages.find((m) => m.ruleId === 'no-restricted-imports')?.message).toContain(`'${name}'`);
  });

  it('passes a workflow that imports only @temporalio/workflow', () => {
    expect(results[files.clean]).toEqual([]);
  });
});
