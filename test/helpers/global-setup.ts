/**
 * Integration global setup: the migrated template database and one workflow bundle for every test file
 * (bundling takes seconds; each file's workers reuse the file).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflows } from '../../activities/worker.js';
import { prepareTemplateDatabase } from './db.js';
import { WORKFLOW_BUNDLE_PATH } from './env.js';

export default async function setup(): Promise<void> {
  await prepareTemplateDatabase();
  const bundle = await bundleWorkflows();
  await mkdir(path.dirname(WORKFLOW_BUNDLE_PATH), { recursive: true });
  await writeFile(WORKFLOW_BUNDLE_PATH, bundle.code);
}
