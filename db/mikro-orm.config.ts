/** MikroORM options shared by every process, the migration script and the tests. */
import path from 'node:path';
import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, PostgreSqlDriver, type Options } from '@mikro-orm/postgresql';
import { ENTITIES } from './entities/index.js';
import { MIGRATIONS } from './migrations/index.js';

export const MIGRATIONS_DIR = path.join(import.meta.dirname, 'migrations');

export interface OrmConnection {
  url: string;
  poolMax: number;
  debug?: boolean;
}

export function ormOptions(conn: OrmConnection): Options {
  return {
    driver: PostgreSqlDriver,
    clientUrl: conn.url,
    entities: ENTITIES,
    extensions: [Migrator],
    debug: conn.debug ?? false,
    allowGlobalContext: false,
    forceUtcTimezone: true,
    pool: { min: 0, max: conn.poolMax, idleTimeoutMillis: 30_000 },
    discovery: { warnWhenNoEntities: true },
    migrations: {
      path: MIGRATIONS_DIR,
      pathTs: MIGRATIONS_DIR,
      // An explicit list (not a folder scan) so migrations load the same under tsx, vitest and compiled JS.
      migrationsList: MIGRATIONS,
      silent: true,
      tableName: 'mikro_orm_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: true,
      snapshotName: '.snapshot-marketplace',
      emit: 'ts',
      fileName: (timestamp: string, name?: string) => `Migration${timestamp}${name ? `_${name}` : ''}`,
    },
  };
}

export async function initOrm(conn: OrmConnection): Promise<MikroORM> {
  return MikroORM.init(ormOptions(conn));
}

/** Apply every pending committed migration; returns the names applied. */
export async function migrateUp(orm: MikroORM): Promise<string[]> {
  const applied = await orm.getMigrator().up();
  return applied.map((m) => m.name);
}
