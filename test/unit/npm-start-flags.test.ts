// The all-in-one rows of the gateway benchmark measure `npm start` as it runs: scripts/start.sh's node flags and the
// benchmark's (bench/gateway/allinone.ts NPM_START_NODE_FLAGS) are the same list.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NPM_START_NODE_FLAGS } from '../../bench/gateway/allinone.js';

describe('npm start node flags', () => {
  it('scripts/start.sh starts node with exactly the flags the benchmark measures', () => {
    const script = readFileSync(new URL('../../scripts/start.sh', import.meta.url), 'utf8');
    const line = script.split('\n').find((l) => l.startsWith('exec node '));
    expect(line).toBeDefined();
    const flags = line!
      .slice('exec node '.length)
      .split(' ')
      .filter((w) => w.startsWith('--') && w !== '--import');
    expect(flags).toEqual(NPM_START_NODE_FLAGS);
  });

  it('passes no process-wide young-generation flag (it would override the gateway thread’s own, gateway/thread.ts)', () => {
    expect(NPM_START_NODE_FLAGS.filter((f) => /semi-space|young-generation/.test(f))).toEqual([]);
  });
});
