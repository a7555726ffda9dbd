// core/stall-monitor.ts: a loop blocked past 20 ms counts as a stall (and only then); the longest delay is kept. Run
// in a child process of its own: the monitor watches the main event loop of the process it runs in.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MONITOR = fileURLToPath(new URL('../../core/stall-monitor.ts', import.meta.url));
const PROGRAM = `
import { StallMonitor } from ${JSON.stringify(MONITOR)};
const block = (ms) => { const until = performance.now() + ms; while (performance.now() < until); };
const turn = (ms) => new Promise((r) => setTimeout(r, ms));
const monitor = new StallMonitor().start();
for (let i = 0; i < 10; i++) { block(2); await turn(15); }
const quiet = { count: monitor.count, gcPauses: monitor.gcPauses };
block(80);
await turn(30);
console.log(JSON.stringify({ quiet, count: monitor.count, longest: monitor.longest }));
monitor.stop();
`;

describe('StallMonitor', () => {
  it('counts a blocked loop as a stall, and a turning loop not', () => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', PROGRAM], {
      encoding: 'utf8',
    });
    const seen = JSON.parse(out.trim().split('\n').pop()!) as {
      quiet: { count: number; gcPauses: number };
      count: number;
      longest: number;
    };
    // A turning loop adds no stall of its own (a loaded machine may add one: the bound is loose), a blocked one does.
    expect(seen.quiet.count).toBeLessThanOrEqual(1);
    expect(seen.count - seen.quiet.count).toBeGreaterThanOrEqual(1);
    expect(seen.count - seen.quiet.count).toBeLessThanOrEqual(3);
    expect(seen.longest).toBeGreaterThanOrEqual(60);
  });
});
