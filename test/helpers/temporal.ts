/** The real Temporal dev server (the CLI built into .tools/bin), started per test file through the SDK. */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { installRuntimeOnce } from '../../activities/worker.js';
import { SEARCH_ATTRIBUTES } from '../../core/temporal/contracts.js';
import { TEMPORAL_CLI, WORKFLOW_BUNDLE_PATH } from './env.js';

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
