/** The real Temporal dev server (the CLI built into .tools/bin), started per test file through the SDK. */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { installRuntimeOnce } from '../../activities/worker.js';
import { SEARCH_ATTRIBUTES } from '../../core/temporal/contracts.js';
import { ROOT, TEMPORAL_CLI, WORKFLOW_BUNDLE_PATH } from './env.js';

export async function startTemporal(): Promise<{ env: TestWorkflowEnvironment; address: string }> {
  installRuntimeOnce('WARN');
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: TEMPORAL_CLI },
      searchAttributes: [SEARCH_ATTRIBUTES.orgId, SEARCH_ATTRIBUTES.apiSlug],
    },
  });
  return { env, address: env.address };
}

/** The workflow bundle built once by the global setup. */
export const workflowBundle = { codePath: WORKFLOW_BUNDLE_PATH };

/** Set RECORD_HISTORIES=1 to refresh the committed histories after an intended workflow change. */
export const RECORD_HISTORIES = process.env.RECORD_HISTORIES === '1';
export const HISTORIES_DIR = path.join(ROOT, 'test', 'workflows', 'histories');

/** Export a run's history with the Temporal CLI (as an operator would) into test/workflows/histories/{file}. */
export async function recordHistory(address: string, workflowId: string, file: string): Promise<void> {
  if (!RECORD_HISTORIES) return;
  const args = ['workflow', 'show', '--workflow-id', workflowId, '--address', address, '--output', 'json'];
  const { stdout } = await promisify(execFile)(TEMPORAL_CLI, args);
  await writeFile(path.join(HISTORIES_DIR, file), `${JSON.stringify(JSON.parse(stdout), null, 1)}\n`);
}
