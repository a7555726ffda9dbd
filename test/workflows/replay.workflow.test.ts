// Replay safety: every recorded history in test/workflows/histories replays against the current workflow code in one
// replay worker (Worker.runReplayHistories), so a change that is not deterministic for runs already in flight (a new,
// removed or reordered command) fails here; and every workflow the worker registers has at least one recorded history.
// Histories are recorded by the flow tests that run each workflow (RECORD_HISTORIES=1; docs/operations.md).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { WORKFLOW_TYPES } from '../../core/temporal/contracts.js';
import { HISTORIES_DIR, workflowBundle } from '../helpers/temporal.js';

interface RecordedHistory {
  events: {
    eventType: string;
    workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } };
  }[];
}

async function recorded(): Promise<{ file: string; type: string; history: RecordedHistory }[]> {
  const files = (await readdir(HISTORIES_DIR)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(
    files.map(async (file) => {
      const history = JSON.parse(await readFile(path.join(HISTORIES_DIR, file), 'utf8')) as RecordedHistory;
      const type = history.events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '?';
      return { file, type, history };
    }),
  );
}

describe('recorded histories replay', () => {
  it('every registered workflow has a recorded, completed history', async () => {
    const histories = await recorded();
    for (const { file, history } of histories) {
      expect(
        history.events.map((e) => e.eventType),
        file,
      ).toContain('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
    }
    const covered = new Set(histories.map((h) => h.type));
    expect(Object.values(WORKFLOW_TYPES).filter((type) => !covered.has(type))).toEqual([]);
  });

  it('every history replays against the current workflow code', async () => {
    const histories = await recorded();
    const results: { workflowId: string; error: string | null }[] = [];
    for await (const result of Worker.runReplayHistories(
      { workflowBundle },
      histories.map(({ file, history }) => ({ workflowId: file, history })),
    )) {
      results.push({ workflowId: result.workflowId, error: result.error ? String(result.error) : null });
    }
    expect(results).toEqual(histories.map(({ file }) => ({ workflowId: file, error: null })));
  });
});
