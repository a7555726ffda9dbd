/**
 * The embedded database for `npm start` with no DATABASE_URL: PGlite (Postgres compiled to WASM) with its files
 * under `.data/`, served on a loopback port through pglite-socket so the rest of the code speaks plain `pg`.
 * PGlite is a single-connection database: callers use a pool of one, and one process owns the files (a lock file
 * stops a second process from opening them). The owner of a running marketplace also serves operator commands on
 * `${dataDir}.ops.sock` (platform/operators/ops-server.ts), so `npm run admin` and `npm run catalog:import` run inside it.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The lock file of the embedded database in `dataDir`: it holds the owner's pid. */
export const lockFileOf = (dataDir: string): string => `${dataDir}.lock`;

/** The live process other than this one that holds the embedded database in `dataDir`, if any. */
export async function lockHolder(dataDir: string): Promise<number | undefined> {
  const held = await readFile(lockFileOf(dataDir), 'utf8').catch(() => undefined);
  const pid = held ? Number.parseInt(held, 10) : NaN;
  return Number.isInteger(pid) && pid !== process.pid && alive(pid) ? pid : undefined;
}

async function takeLock(lockFile: string, dataDir: string): Promise<void> {
  const pid = await lockHolder(dataDir);
  if (pid !== undefined) {
    throw new Error(
      `The embedded database in ${dataDir} is in use by process ${pid}. Stop that process (Ctrl-C where ` +
        '"npm start" runs) and run this again, run all processes together with "npm start", or point each process ' +
        'at a shared Postgres with DATABASE_URL. (While "npm start" runs, "npm run admin" and "npm run ' +
        'catalog:import" run inside it by themselves.)',
    );
  }
  await writeFile(lockFile, String(process.pid));
}

export async function startEmbeddedDatabase(dataDir: string, port = 0): Promise<EmbeddedDatabase> {
  await mkdir(dataDir, { recursive: true });
  const lockFile = lockFileOf(dataDir);
  await takeLock(lockFile, dataDir);
  // pg_trgm: catalog search's typo matching (Migration20261123120000_search creates the extension).
  const db = await PGlite.create(dataDir, { extensions: { pg_trgm } });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port, maxConnections: 1 });
  await server.start();
  const conn = server.getServerConn(); // "127.0.0.1:PORT"
  return {
    url: `postgresql://postgres:postgres@${conn}/postgres?sslmode=disable`,
    async stop() {
      await server.stop();
      await db.close();
      await rm(lockFile, { force: true });
    },
  };
}
