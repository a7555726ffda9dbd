/**
 * Real Postgres for tests: a template database migrated once per run (global setup), and a fresh database per
 * test file cloned from it (CREATE DATABASE … TEMPLATE, ~100 ms).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { initOrm, migrateUp } from '../../db/mikro-orm.config.js';
import { PG_ADMIN_URL, pgUrl, TEMPLATE_DB } from './env.js';
import { ensureRollupTables } from './rollups.js';

/** Run `fn` with a client connected to `url`, closed after. */
export async function withPgClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const admin = <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => withPgClient(PG_ADMIN_URL, fn);

async function dropDatabase(client: pg.Client, name: string): Promise<void> {
  await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

/** Re-create the template from the committed migrations. */
export async function prepareTemplateDatabase(): Promise<void> {
  await admin(async (c) => {
    await dropDatabase(c, TEMPLATE_DB);
    await c.query(`CREATE DATABASE "${TEMPLATE_DB}"`);
  });
  const orm = await initOrm({ url: pgUrl(TEMPLATE_DB), poolMax: 2 });
  try {
    await migrateUp(orm);
  } finally {
    await orm.close(true);
  }
  // Until the rollups' migration lands beside the readers (test/helpers/rollups.ts).
  await ensureRollupTables(pgUrl(TEMPLATE_DB));
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database of our own. `empty: true` gives one with no schema at all. */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const name = `mp_t_${randomBytes(6).toString('hex')}`;
  await admin((c) =>
    c.query(options.empty ? `CREATE DATABASE "${name}"` : `CREATE DATABASE "${name}" TEMPLATE "${TEMPLATE_DB}"`),
  );
  return {
    name,
    url: pgUrl(name),
    drop: () => admin((c) => dropDatabase(c, name)),
  };
}

/** Run SQL against a test database (assertions and planted faults). */
export async function sql<R extends pg.QueryResultRow = pg.QueryResultRow>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<R[]> {
  return withPgClient(url, async (client) => (await client.query<R>(text, params)).rows);
}
