// Every test file that moves money ends by checking the books (docs/decisions.md, "Replay"): each org's cached
// balance equals its ledger sum (`ledger.findDrift()`), or the fuller checks built on it (the reconciliation, the
// crash tests' books helper, the ledger_drift_orgs metric). A new money-moving file without one fails here.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIRS = ['test/integration', 'test/workflows', 'test/e2e'];
/** Posting to the ledger, calling the gateway, booking usage, paying out or charging. */
const MOVES_MONEY = /ledger\.post\(|\/v1\/proxy\/\$\{|UsageCommitter|payOut\(|runBillingCycle|credits\/checkout/;
const CHECKS_BOOKS =
  /findDrift\(|reconciliation\.run\(|ledger_drift_orgs|helpers\/books\.js|'admin', '--', 'reconcile'/;
/** Files that move money but cannot reach the books from the test, with the reason. */
const EXEMPT: Record<string, string> = {
  'test/e2e/register-me.e2e.test.ts':
    'runs `npm start` on embedded PGlite inside the child process; the test has no connection to its database',
};

const files = DIRS.flatMap((dir) =>
  readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `${dir}/${f}`),
);

describe('books checks', () => {
  it('every money-moving test file checks the books', () => {
    const missing = files.filter((file) => {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      return MOVES_MONEY.test(text) && !CHECKS_BOOKS.test(text) && !(file in EXEMPT);
    });
    expect(missing).toEqual([]);
  });

  it('every exemption still names a money-moving file without a books check', () => {
    for (const file of Object.keys(EXEMPT)) {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      expect(MOVES_MONEY.test(text), file).toBe(true);
      expect(CHECKS_BOOKS.test(text), file).toBe(false);
    }
  });

  it('recognises money-moving files (the pattern is not vacuous)', () => {
    const moving = files.filter((file) => MOVES_MONEY.test(readFileSync(path.join(ROOT, file), 'utf8')));
    expect(moving).toEqual(
      expect.arrayContaining([
        'test/integration/spend/ambiguous-settle.test.ts',
        'test/integration/gateway/path-traversal.test.ts',
      ]),
    );
    expect(moving.length).toBeGreaterThan(20);
  });
});
