// The committed migrations: they apply to an empty database through `npm run db:migrate`, they match the entities,
// and the invariants the code relies on live in the schema (append-only ledger, non-negative prepaid balances).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initOrm } from '../../../db/mikro-orm.config.js';
import { createTestDatabase, sql, type TestDatabase } from '../../helpers/db.js';
import { ROOT } from '../../helpers/env.js';

const run = promisify(execFile);

describe('database schema', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('npm run db:migrate applies every migration to an empty database, and a second run does nothing', async () => {
    const env = { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'silent' };
    const first = await run('npm', ['run', '--silent', 'db:migrate'], { cwd: ROOT, env });
    expect(first.stdout).toMatch(/Applied: Migration\d+_init/);
    const second = await run('npm', ['run', '--silent', 'db:migrate'], { cwd: ROOT, env });
    expect(second.stdout).toContain('Database is up to date.');
    const tables = await sql<{ table_name: string }>(
      db.url,
      "select table_name from information_schema.tables where table_schema = 'public' order by 1",
    );
    expect(tables.map((t) => t.table_name)).toEqual(
      expect.arrayContaining(['api_keys', 'ledger_entries', 'mikro_orm_migrations', 'orgs', 'users']),
    );
  });

  it('the entities need no migration beyond the committed ones', async () => {
    const orm = await initOrm({ url: db.url, poolMax: 1 });
    try {
      expect(await orm.getMigrator().checkMigrationNeeded()).toBe(false);
    } finally {
      await orm.close(true);
    }
  });

  it('refuses UPDATE, DELETE and TRUNCATE of ledger rows', async () => {
    await sql(db.url, "insert into orgs (id, credit_cents) values ('org_ledger', 5)");
    await sql(
      db.url,
      "insert into ledger_entries (id, org_id, kind, amount_cents, balance_after_cents) values ('led_1', 'org_ledger', 'grant', 5, 5)",
    );
    await expect(sql(db.url, "update ledger_entries set amount_cents = 500 where id = 'led_1'")).rejects.toThrow(
      /append-only: UPDATE/,
    );
    await expect(sql(db.url, "delete from ledger_entries where id = 'led_1'")).rejects.toThrow(/append-only: DELETE/);
    await expect(sql(db.url, 'truncate ledger_entries cascade')).rejects.toThrow(/append-only: TRUNCATE/);
    const rows = await sql<{ amount_cents: string }>(
      db.url,
      "select amount_cents from ledger_entries where id = 'led_1'",
    );
    expect(rows).toEqual([{ amount_cents: '5' }]);
  });

  it('keeps prepaid balances non-negative and allows card orgs to owe', async () => {
    await sql(db.url, "insert into orgs (id, credit_cents) values ('org_prepaid', 0)");
    await expect(sql(db.url, "update orgs set credit_cents = -1 where id = 'org_prepaid'")).rejects.toThrow(
      /orgs_prepaid_credit_nonnegative/,
    );
    await sql(db.url, "insert into orgs (id, billing_mode, credit_cents) values ('org_card', 'card', 0)");
    await sql(db.url, "update orgs set credit_cents = -5 where id = 'org_card'");
  });

  it('refuses zero-amount ledger rows, unknown kinds and a reused idempotency key', async () => {
    await sql(db.url, "insert into orgs (id) values ('org_c')");
    const insert = (id: string, kind: string, amount: number, key: string | null) =>
      sql(
        db.url,
        'insert into ledger_entries (id, org_id, kind, amount_cents, balance_after_cents, idempotency_key) values ($1, $2, $3, $4, 0, $5)',
        [id, 'org_c', kind, amount, key],
      );
    await expect(insert('led_z', 'grant', 0, null)).rejects.toThrow(/ledger_entries_amount_nonzero/);
    await expect(insert('led_k', 'gift', 1, null)).rejects.toThrow(/ledger_entries_kind_check/);
    await insert('led_a', 'grant', 1, 'k1');
    await expect(insert('led_b', 'grant', 1, 'k1')).rejects.toThrow(/ledger_entries_org_idempotency_key_uniq/);
  });
});
