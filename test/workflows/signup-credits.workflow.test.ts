// signupCreditsWorkflow end to end: core/temporal starts and signals it on the real Temporal dev server, the worker
// runs it with real activities against Postgres, and the recorded history replays deterministically.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Org } from '../../db/entities/index.js';
import { newId } from '../../core/ids.js';
import { SEARCH_ATTRIBUTES, STARTER_CREDIT_CENTS, workflowIds } from '../../core/temporal/contracts.js';
import { startWorker, type RunningWorker } from '../../activities/worker.js';
import { sql } from '../helpers/db.js';
import { createTestStack, type TestStack } from '../helpers/services.js';
import { recordHistory, startTemporal, workflowBundle } from '../helpers/temporal.js';

const HISTORY_FILE = path.join(import.meta.dirname, 'histories', 'signup-credits-granted.json');

describe('signupCreditsWorkflow', () => {
  let temporal: TestWorkflowEnvironment;
  let stack: TestStack;
  let worker: RunningWorker;

  beforeAll(async () => {
    const t = await startTemporal();
    temporal = t.env;
    stack = await createTestStack({ temporalAddress: t.address });
    worker = await startWorker(stack.services, { workflowBundle });
  });
  afterAll(async () => {
    await worker?.shutdown();
    expect(await stack.services.ledger.findDrift()).toEqual([]);
    await stack?.close();
    await temporal?.teardown();
  });

  async function newOrg(): Promise<string> {
    const em = stack.services.orm.em.fork();
    const org = em.create(Org, { id: newId('org'), kind: 'standard' });
    await em.flush();
    return org.id;
  }

  async function ledgerRows(orgId: string) {
    return sql<{ kind: string; amount_cents: string; idempotency_key: string; reference: string }>(
      stack.db.url,
      'select kind, amount_cents, idempotency_key, reference from ledger_entries where org_id = $1',
      [orgId],
    );
  }

  it('holds the credit until the email-verified signal, then grants it once', async () => {
    const t = stack.services.temporal;
    const orgId = await newOrg();
    expect(await t.startSignupCredits({ orgId, amountCents: STARTER_CREDIT_CENTS, holdFor: '30 days' })).toEqual({
      workflowId: `signup-credits:${orgId}`,
      started: true,
    });
    await expect
      .poll(() => t.signupCreditsStatus(orgId), { timeout: 10_000 })
      .toEqual({ state: 'holding', amountCents: 100 });
    expect(await stack.services.ledger.balance(orgId)).toBe(0);

    // Ten concurrent verifications: one grant.
    expect(await Promise.all(Array.from({ length: 10 }, () => t.signalEmailVerified(orgId)))).toEqual(
      Array(10).fill(true),
    );
    expect(await t.signupCreditsResult(orgId)).toMatchObject({ outcome: 'granted', balanceAfterCents: 100 });
    expect(await stack.services.ledger.balance(orgId)).toBe(100);
    expect(await ledgerRows(orgId)).toEqual([
      {
        kind: 'grant',
        amount_cents: '100',
        idempotency_key: 'starter-credits',
        reference: `workflow:signup-credits:${orgId}`,
      },
    ]);

    // A finished hold is neither restarted nor signalled again.
    expect((await t.startSignupCredits({ orgId, amountCents: 100, holdFor: '30 days' })).started).toBe(false);
    expect(await t.signalEmailVerified(orgId)).toBe(false);
    expect(await stack.services.ledger.balance(orgId)).toBe(100);

    // Operators can find the run by org in the Temporal UI.
    const description = await temporal.client.workflow.getHandle(workflowIds.signupCredits(orgId)).describe();
    expect(description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.orgId)).toBe(orgId);

    await recordHistory(temporal.address, workflowIds.signupCredits(orgId), 'signup-credits-granted.json');
  });

  it('lapses without granting when verification never comes', async () => {
    const orgId = await newOrg();
    await stack.services.temporal.startSignupCredits({ orgId, amountCents: 100, holdFor: '1 second' });
    expect(await stack.services.temporal.signupCreditsResult(orgId)).toEqual({ outcome: 'expired' });
    expect(await ledgerRows(orgId)).toEqual([]);
    expect(await stack.services.temporal.signalEmailVerified(orgId)).toBe(false);
  });

  it('answers false when there is no hold to signal', async () => {
    expect(await stack.services.temporal.signalEmailVerified('org_without_hold')).toBe(false);
    expect(await stack.services.temporal.signupCreditsStatus('org_without_hold')).toBeNull();
  });

  it('replays the committed history of a granted run', async () => {
    const history = JSON.parse(await readFile(HISTORY_FILE, 'utf8')) as { events: { eventType: string }[] };
    expect(history.events.map((e) => e.eventType)).toEqual(
      expect.arrayContaining([
        'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED',
        'EVENT_TYPE_ACTIVITY_TASK_COMPLETED',
        'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED',
      ]),
    );
    await Worker.runReplayHistory({ workflowBundle }, history, 'signup-credits:recorded');
  });
});
