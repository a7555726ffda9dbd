// The reconciliation schedule: registered at worker start; a run finds nothing wrong on consistent books, and finds
// a planted drift (cached balance off its ledger sum) and a succeeded payment that was never booked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../core/ids.js';
import type { ReconciliationReport } from '../../core/billing/reconciliation.service.js';
import { SCHEDULES } from '../../core/temporal/contracts.js';
import { createPerson } from '../helpers/accounts.js';
import { sql } from '../helpers/db.js';
import { startFullStack, type FullStack } from '../helpers/full-stack.js';
import { recordHistory } from '../helpers/temporal.js';

describe('reconcileBooksWorkflow', () => {
  let s: FullStack;

  beforeAll(async () => {
    s = await startFullStack();
  });
  afterAll(async () => {
    // Every money test file ends with the books consistent (each org's cached balance = its ledger sum).
    expect(await s.services.ledger.findDrift()).toEqual([]);
    await s?.close();
  });

  it('is scheduled hourly by the worker', async () => {
    const description = await s.temporal.client.schedule.getHandle(SCHEDULES.reconcileBooks.id).describe();
    expect(description.action).toMatchObject({ type: 'startWorkflow', workflowType: 'reconcileBooksWorkflow' });
    expect(description.spec.intervals?.[0]?.every).toBe(3_600_000);
  });

  it('finds no drift in consistent books, then finds planted drift and an unbooked payment', async () => {
    const a = await createPerson(s.services);
    const b = await createPerson(s.services);
    await s.services.ledger.post({ orgId: a.orgId, kind: 'grant', amountCents: 100 });
    await s.services.ledger.post({ orgId: a.orgId, kind: 'usage', amountCents: -30 });
    await s.services.ledger.post({
      orgId: b.orgId,
      kind: 'purchase',
      amountCents: 500,
      idempotencyKey: 'payment:pay_booked',
    });

    const clean = (await s.services.temporal.reconcileNow('reconcile:clean')) as ReconciliationReport;
    expect(clean).toMatchObject({ ok: true, drift: [], unbooked_payments: [] });
    expect(clean.orgs_checked).toBeGreaterThanOrEqual(2);
    await recordHistory(s.temporal.address, 'reconcile:clean', 'reconcile-books-clean.json');

    await sql(s.db.url, 'update orgs set credit_cents = credit_cents + 7 where id = $1', [a.orgId]);
    const paymentId = newId('payment');
    await sql(
      s.db.url,
      "insert into payments (id, org_id, kind, amount_cents, credit_cents, status, idempotency_key) values ($1, $2, 'checkout', 500, 500, 'succeeded', $3)",
      [paymentId, b.orgId, `checkout:${paymentId}`],
    );
    const dirty = (await s.services.temporal.reconcileNow()) as ReconciliationReport;
    expect(dirty.ok).toBe(false);
    expect(dirty.drift).toEqual([{ orgId: a.orgId, creditCents: 77, ledgerSumCents: 70 }]);
    expect(dirty.unbooked_payments).toEqual([{ payment_id: paymentId, org_id: b.orgId, credit_cents: 500 }]);
    expect(s.logs.text()).toContain('the books do not balance');

    // Put the books back so this file's data is consistent again.
    await sql(s.db.url, 'update orgs set credit_cents = credit_cents - 7 where id = $1', [a.orgId]);
    await s.services.ledger.post({
      orgId: b.orgId,
      kind: 'purchase',
      amountCents: 500,
      idempotencyKey: `payment:${paymentId}`,
    });
    expect(((await s.services.temporal.reconcileNow()) as ReconciliationReport).ok).toBe(true);
  });
});
