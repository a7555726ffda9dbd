/**
 * Everything a flow test needs in one process: real Postgres and Redis, the Temporal dev server with our worker,
 * an SMTP capture as the mail server, and the control plane on a random port.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createApiApp } from '../../api/app.js';
import { startWorker, type RunningWorker } from '../../activities/worker.js';
import type { Clock } from '../../core/clock.js';
import type { RunningHttpServer } from '../../platform/runtime/http-server.js';
import type { ServiceOptions } from '../../platform/services.js';
import { serve } from './http.js';
import { createTestStack, type TestStack } from './services.js';
import { startSmtpCapture, type SmtpCapture } from './smtp.js';
import { startTemporal, workflowBundle } from './temporal.js';

export interface FullStack extends TestStack {
  temporal: TestWorkflowEnvironment;
  worker: RunningWorker;
  smtp: SmtpCapture;
  api: RunningHttpServer;
  /** The control plane's base URL. */
  base: string;
}

export async function startFullStack(
  options: {
    clock?: Clock;
    env?: Record<string, string>;
    upstream?: ServiceOptions['upstream'];
    /** false: no recurring schedules (no rollup runs between two reads a test compares; docs/testing.md). */
    schedules?: boolean;
  } = {},
): Promise<FullStack> {
  const smtp = await startSmtpCapture();
  const { env: temporal, address } = await startTemporal();
  const stack = await createTestStack({
    temporalAddress: address,
    clock: options.clock,
    env: { SMTP_URL: smtp.url, ...options.env },
    upstream: options.upstream,
  });
  const worker = await startWorker(stack.services, { workflowBundle, schedules: options.schedules });
  const api = await serve(createApiApp(stack.services).callback());
  return {
    ...stack,
    temporal,
    worker,
    smtp,
    api,
    base: api.url,
    async close() {
      await api.close();
      await worker.shutdown();
      await stack.close();
      await temporal.teardown();
      await smtp.close();
    },
  };
}

/** The verification token from a verification mail (the plain `Verification token:` line). */
export function tokenFromMail(text: string): string {
  const match = /^Verification token: (\S+)$/m.exec(text);
  if (!match) throw new Error(`no verification token in mail:\n${text}`);
  return match[1]!;
}

/** The 6-digit code from a sign-in mail. */
export function codeFromMail(text: string): string {
  const match = /^Your code: (\d{6})$/m.exec(text);
  if (!match) throw new Error(`no code in mail:\n${text}`);
  return match[1]!;
}
