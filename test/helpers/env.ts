/** Where the real components the tests use live. Tests read only these constants, never process.env directly. */
import { createHash } from 'node:crypto';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const PG_HOST = '127.0.0.1';
export const PG_PORT = 5432;
export const PG_ADMIN_URL = `postgres://postgres@${PG_HOST}:${PG_PORT}/postgres`;
export const REDIS_URL = 'redis://127.0.0.1:6379';
export const TEMPORAL_CLI = path.join(ROOT, '.tools', 'bin', 'temporal');
export const STRIPE_MOCK = path.join(ROOT, '.tools', 'bin', 'stripe-mock');
/** One template per checkout, so test runs in two worktrees of this repository never drop each other's template. */
export const TEMPLATE_DB = `mp_test_template_${createHash('sha256').update(ROOT).digest('hex').slice(0, 8)}`;
export const WORKFLOW_BUNDLE_PATH = path.join(ROOT, '.cache', 'workflow-bundle.js');

export const pgUrl = (database: string) => `postgres://postgres@${PG_HOST}:${PG_PORT}/${database}`;
