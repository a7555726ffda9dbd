// The fault matrix (test/helpers/fault-matrix.ts, docs/reliability.md). `npm test` runs the fast cells (FAST_CELLS);
// `npm run faults` sets FAULT_MATRIX=all, runs every cell, writes the results to test-results/fault-matrix.json and
// regenerates docs/reliability.md from them (scripts/fault-report.ts).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/env.js';
import { ALL_CELLS, FAST_CELLS, startMatrix, type CellResult, type Matrix } from '../../helpers/fault-matrix.js';

const ALL = process.env.FAULT_MATRIX === 'all';
const only = process.env.FAULT_CELLS?.split(',').filter(Boolean);
const cells = ALL_CELLS.filter((c) => (only ? only.includes(c.id) : ALL || FAST_CELLS.includes(c.id)));
const CELL_TIMEOUT_MS = 420_000;

describe('fault matrix (real processes behind Toxiproxy)', () => {
  let matrix: Matrix;
  const results: CellResult[] = [];

  beforeAll(async () => {
    matrix = await startMatrix();
  }, 240_000);

  afterAll(async () => {
    await matrix?.close();
    if (ALL || only) {
      const out = path.join(ROOT, 'test-results', 'fault-matrix.json');
      mkdirSync(path.dirname(out), { recursive: true });
      // A run of chosen cells (FAULT_CELLS) replaces those cells in the last full run's results.
      const earlier: CellResult[] =
        only && existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as { results: CellResult[] }).results : [];
      const merged = [...earlier.filter((r) => !results.some((x) => x.id === r.id)), ...results];
      writeFileSync(out, `${JSON.stringify({ at: new Date().toISOString(), results: merged }, null, 1)}\n`);
    }
  }, 120_000);

  it.each(cells.map((c) => [c.id, c] as const))(
    '%s',
    async (_id, cell) => {
      const result = await matrix.run(cell);
      results.push(result);
      console.log(
        `[fault-matrix] ${result.id}: ${result.passed ? 'pass' : 'FAIL'} in ${(result.durationMs / 1000).toFixed(0)} s, ` +
          `${result.calls} calls ${JSON.stringify(result.statuses)}, reservations released in ` +
          `${result.reservationsReleasedMs ?? '-'} ms; ${result.workflow}`,
      );
      expect(result.problems, result.id).toEqual([]);
    },
    CELL_TIMEOUT_MS,
  );
});
