// The usage-batches migration (Migration20261127131304_usage_batches) on a database that already has per-call books:
// an earning accrual queued before it (keyed by its usage id) folds into the same `earning:{usage}` / `fee:{usage}`
// rows as before, per-call debits (`usage:{id}`) still reconcile against their earnings, and usage rows gain a null
// batch_id (every partition has the column).
import { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EarningsService } from '../../../core/billing/earnings.service.js';
import { ReconciliationService } from '../../../core/billing/reconciliation.service.js';
import { systemClock } from '../../../core/clock.js';
import { newId } from '../../../core/ids.js';
import { LedgerService } from '../../../core/billing/ledger.service.js';
import { ormOptions } from '../../../db/mikro-orm.config.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { captureLogs } from '../../helpers/services.js';

const BEFORE = 'Migration20261127081409_idempotency_unsynced';

describe('usage batches migration', () => {
  let db: TestDatabase;
  let orm: MikroORM;
  const usageId = newId('usage');
  const q = <R extends object>(text: string, params: unknown[] = []) => orm.em.fork().execute<R[]>(text, params);

  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
    const base = ormOptions({ url: db.url, poolMax: 2 });
    orm = await MikroORM.init({ ...base, migrations: { ...base.migrations, snapshot: false } });
    await orm.getMigrator().up({ to: BEFORE });
    await q(`insert into orgs (id, credit_cents) values ('org_cons', 95), ('org_prov', 0)`);
    await q(
      `insert into api_keys (id, org_id, name, key_hash, key_prefix, scopes)
       values ('key_cons', 'org_cons', 'k', 'h', 'p', '{}')`,
    );
    await q(
      `insert into ledger_entries (id, org_id, kind, amount_cents, balance_after_cents, idempotency_key, reference)
       values ('led_grant', 'org_cons', 'grant', 100, 100, null, null),
              ('led_use', 'org_cons', 'usage', -5, 95, ?, ?)`,
      [`usage:${usageId}`, `usage:${usageId}`],
    );
    await q(
      `insert into usage_events (id, org_id, key_id, api_slug, method, path, status, outcome, cost_cents,
         credit_applied_cents, latency_ms, request_id, created_at)
       values (?, 'org_cons', 'key_cons', 'legacy', 'GET', '/', 200, 'success', 5, 5, 1, 'req_legacy', now())`,
      [usageId],
    );
    await q(
      `insert into earning_accruals (usage_id, provider_org_id, consumer_org_id, gross_cents, fee_cents)
       values (?, 'org_prov', 'org_cons', 5, 1)`,
      [usageId],
    );
    await orm.getMigrator().up();
  }, 180_000);
  afterAll(async () => {
    await orm?.close(true);
    await db?.drop();
  });

  it('keeps a queued per-call accrual (its id is its usage id) and folds it into the per-call rows', async () => {
    expect(await q(`select id, batch_id, usage_id from earning_accruals`)).toEqual([
      { id: usageId, batch_id: null, usage_id: usageId },
    ]);
    const { logger } = captureLogs();
    expect(await new EarningsService({ orm, logger }).foldAll()).toBe(1);
    expect(
      await q(
        `select kind, amount_cents, idempotency_key, reference from ledger_entries where org_id = 'org_prov' order by kind`,
      ),
    ).toEqual([
      { kind: 'platform_fee', amount_cents: '-1', idempotency_key: `fee:${usageId}`, reference: `usage:${usageId}` },
      {
        kind: 'provider_earning',
        amount_cents: '5',
        idempotency_key: `earning:${usageId}`,
        reference: `usage:${usageId}`,
      },
    ]);
  });

  it('gives usage rows a null batch_id in every partition, and the per-call books still reconcile', async () => {
    expect(await q(`select batch_id from usage_events where id = ?`, [usageId])).toEqual([{ batch_id: null }]);
    const [missing] = await q<{ n: string }>(
      `select count(*) as n from pg_inherits i
        where i.inhparent = 'usage_events'::regclass
          and not exists (select 1 from pg_attribute a where a.attrelid = i.inhrelid and a.attname = 'batch_id')`,
    );
    expect(Number(missing!.n)).toBe(0);
    const { logger } = captureLogs();
    const ledger = new LedgerService(orm);
    const report = await new ReconciliationService({ orm, ledger, clock: systemClock, logger }).run();
    expect(report, JSON.stringify(report)).toMatchObject({
      ok: true,
      unmatched_calls: [],
      unmatched_batches: [],
      unbatched_calls: [],
    });
  });
});
