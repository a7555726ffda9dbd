import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Org } from '../../../db/entities/index.js';
import { ConflictError, NotFoundError, PaymentRequiredError, ValidationError } from '../../../core/errors.js';
import { newId } from '../../../core/ids.js';
import { sql } from '../../helpers/db.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

describe('LedgerService', () => {
  let stack: TestStack;

  async function newOrg(billingMode: 'prepaid' | 'card' = 'prepaid'): Promise<string> {
    const em = stack.services.orm.em.fork();
    const org = em.create(Org, { id: newId('org'), billingMode });
    await em.flush();
    return org.id;
  }

  beforeAll(async () => {
    stack = await createTestStack();
  });
  afterAll(async () => {
    // Every money test file ends with the books consistent.
    expect(await stack.services.ledger.findDrift()).toEqual([]);
    await stack.close();
  });

  it('credits and debits in one transaction with the cached balance', async () => {
    const { ledger } = stack.services;
    const orgId = await newOrg();
    const a = await ledger.post({ orgId, kind: 'grant', amountCents: 100 });
    const b = await ledger.post({ orgId, kind: 'usage', amountCents: -30, reference: 'usage:test' });
    expect([a.balanceAfterCents, b.balanceAfterCents]).toEqual([100, 70]);
    expect(a.createdAt).toBeInstanceOf(Date);
    expect(Number.isNaN(a.createdAt.getTime())).toBe(false);
    expect(await ledger.balance(orgId)).toBe(70);
    const rows = await sql(
      stack.db.url,
      'select kind, amount_cents, balance_after_cents from ledger_entries where org_id = $1 order by id',
      [orgId],
    );
    expect(rows).toEqual([
      { kind: 'grant', amount_cents: '100', balance_after_cents: '100' },
      { kind: 'usage', amount_cents: '-30', balance_after_cents: '70' },
    ]);
  });

  it('refuses a debit that would take a prepaid org below zero, and changes nothing', async () => {
    const { ledger } = stack.services;
    const orgId = await newOrg();
    await ledger.post({ orgId, kind: 'grant', amountCents: 10 });
    await expect(ledger.post({ orgId, kind: 'usage', amountCents: -11 })).rejects.toBeInstanceOf(PaymentRequiredError);
    expect(await ledger.balance(orgId)).toBe(10);
  });

  it('lets a card org go below zero (the rest is billed to the card)', async () => {
    const orgId = await newOrg('card');
    const e = await stack.services.ledger.post({ orgId, kind: 'usage', amountCents: -25 });
    expect(e.balanceAfterCents).toBe(-25);
  });

  it('validates the amount and the org', async () => {
    const { ledger } = stack.services;
    const orgId = await newOrg();
    await expect(ledger.post({ orgId, kind: 'grant', amountCents: 0 })).rejects.toBeInstanceOf(ValidationError);
    await expect(ledger.post({ orgId, kind: 'grant', amountCents: 1.5 })).rejects.toBeInstanceOf(ValidationError);
    await expect(ledger.post({ orgId: 'org_missing', kind: 'grant', amountCents: 1 })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it('applies an idempotency key once, even under 20 concurrent posts', async () => {
    const { ledger } = stack.services;
    const orgId = await newOrg();
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        ledger.post({ orgId, kind: 'grant', amountCents: 100, idempotencyKey: 'starter' }),
      ),
    );
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect(await ledger.balance(orgId)).toBe(100);
    const rows = await sql<{ count: string }>(stack.db.url, 'select count(*) from ledger_entries where org_id = $1', [
      orgId,
    ]);
    expect(rows[0]?.count).toBe('1');
  });

  it('refuses an idempotency key reused for a different entry', async () => {
    const { ledger } = stack.services;
    const orgId = await newOrg();
    await ledger.post({ orgId, kind: 'grant', amountCents: 5, idempotencyKey: 'k' });
    await expect(ledger.post({ orgId, kind: 'grant', amountCents: 6, idempotencyKey: 'k' })).rejects.toBeInstanceOf(
      ConflictError,
    );
  });

  it('serialises concurrent debits: 20 debits of 10 against 45 give exactly 4', async () => {
    const { ledger } = stack.services;
    const orgId = await newOrg();
    await ledger.post({ orgId, kind: 'grant', amountCents: 45 });
    const settled = await Promise.allSettled(
      Array.from({ length: 20 }, () => ledger.post({ orgId, kind: 'usage', amountCents: -10 })),
    );
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(4);
    expect(await ledger.balance(orgId)).toBe(5);
  });

  it('finds drift planted between the cache and the ledger', async () => {
    const orgId = await newOrg();
    await stack.services.ledger.post({ orgId, kind: 'grant', amountCents: 7 });
    await sql(stack.db.url, 'update orgs set credit_cents = 9 where id = $1', [orgId]);
    expect(await stack.services.ledger.findDrift()).toEqual([{ orgId, creditCents: 9, ledgerSumCents: 7 }]);
    // Undo the planted drift so this file's closing invariant check holds.
    await sql(stack.db.url, 'update orgs set credit_cents = 7 where id = $1', [orgId]);
  });
});
