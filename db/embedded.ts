/**
 * The embedded database for `npm start` with no DATABASE_URL: PGlite (Postgres compiled to WASM) with its files
 * under `.data/`, in a thread of its own, served on a loopback port through pglite-socket so the rest of the code
 * speaks plain `pg`.
 * PGlite is a single-connection database: callers use a pool of one, and one process owns the files (a lock file
 * stops a second process from opening them). The owner of a running marketplace also serves operator commands on
 * `${dataDir}.ops.sock` (platform/operators/ops-server.ts), so `npm run admin` and `npm run catalog:import` run inside it.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';

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

/**
 * Open the embedded database in `dataDir` and serve it on a loopback port. PGlite runs in a thread of its own
 * (db/embedded-thread.js): its statements run synchronously in WASM, and on the marketplace's own event loop each one
 * would hold up every answer of the gateway behind it (issue 32).
 */
export async function startEmbeddedDatabase(dataDir: string, port = 0): Promise<EmbeddedDatabase> {
  await mkdir(dataDir, { recursive: true });
  const lockFile = lockFileOf(dataDir);
  await takeLock(lockFile, dataDir);
  const thread = new Worker(new URL('./embedded-thread.js', import.meta.url), {
    workerData: { dataDir, port },
    // The thread is plain JavaScript: no loader hooks (tsx) needed in it.
    execArgv: [],
  });
  let conn: string;
  try {
    conn = await new Promise<string>((resolve, reject) => {
      thread.once('error', reject);
      thread.once('exit', (code) => reject(new Error(`the embedded database thread exited (${code}) before serving`)));
      thread.once('message', (m: { conn?: string; error?: string }) =>
        m.conn ? resolve(m.conn) : reject(new Error(`the embedded database did not open: ${m.error ?? 'unknown'}`)),
      );
    });
  } catch (err) {
    await thread.terminate();
    await rm(lockFile, { force: true });
    throw err;
  }
  thread.removeAllListeners();
  let stopped: Promise<void> | undefined;
  return {
    url: `postgresql://postgres:postgres@${conn}/postgres?sslmode=disable`,
    stop() {
      stopped ??= (async () => {
        await new Promise<void>((resolve) => {
          const done = () => resolve();
          thread.once('message', done);
          thread.once('exit', done);
          thread.postMessage('stop');
        });
        await thread.terminate();
        await rm(lockFile, { force: true });
      })();
      return stopped;
    },
  };
}
