/**
 * axe-core in a page of headless Chromium: a screenshot for the record (under `outDir`), then every rule axe runs.
 * "Axe clean" (issue 31) means no violation at all, of any impact; the check prints each violation with its nodes.
 */
import path from 'node:path';
import axe from 'axe-core';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/** Screenshot `page` as `<outDir>/<name>.png` (when `outDir` is given) and expect axe-core to find no violation. */
export async function expectAxeClean(page: Page, name: string, outDir?: string): Promise<void> {
  if (outDir) await page.screenshot({ path: path.join(outDir, `${name}.png`), fullPage: true });
  await page.evaluate(axe.source);
  const result = await page.evaluate(async () => {
    const { axe: runner } = globalThis as unknown as {
      axe: { run(): Promise<{ violations: Violation[]; passes: unknown[] }> };
    };
    const r = await runner.run();
    return {
      passes: r.passes.length,
      violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes })),
    };
  });
  expect(result.passes, `${name}: axe ran its rules`).toBeGreaterThan(10);
  const shown = result.violations.map(
    (v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
  );
  expect(shown, `${name}: axe-core violations`).toEqual([]);
}
