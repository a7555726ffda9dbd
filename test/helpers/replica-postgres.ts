/**
 * A real streaming replica for the read-replica tests (issue 33): `pg_basebackup -R -X stream -c fast` of a primary on
 * loopback, started as a hot standby on a port of its own; it streams the primary's WAL over a replication connection
 * and answers read-only queries, exactly as a production replica does.
 *
 * The primary is a scratch cluster (scratch-postgres.ts), not the shared test server on 5432: that server's pg_hba.conf
 * has no `replication` entry (neither `local` nor `host`), so no replication connection, and no base backup, is
 * possible without editing system configuration; an `initdb` cluster allows replication from loopback by default. A
 * base backup of it (one migrated database) takes well under a second.
 *
 * Hot standby requires settings at least the primary's (max_connections and friends): they are read from the primary
 * and given on the command line, since the primary sets them there and its postgresql.conf does not carry them.
 */
import { execFile } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startCrashable, type CrashableServer } from './crashable.js';
import { sql } from './db.js';
import { freePort } from './ports.js';
import { accepts, PG_BIN, runAs } from './scratch-postgres.js';

const run = promisify(execFile);

/** Settings a hot standby needs at least as high as its primary's. */
const AT_LEAST_PRIMARY = [
  'max_connections',
  'max_worker_processes',
  'max_wal_senders',
  'max_prepared_transactions',
  'max_locks_per_transaction',
] as const;

export interface StreamingReplica extends CrashableServer {
  /** A database of the replica (the same name as on the primary). */
  urlOf(database: string): string;
  /** How long the base backup took (ms). */
  backupMs: number;
}

/** Base-backs up the primary on 127.0.0.1:`primary.port` and starts it as a streaming hot standby; ready once it answers. */
export async function startStreamingReplica(primary: { port: number }): Promise<StreamingReplica> {
  const user = runAs();
  const root = mkdtempSync(path.join(os.tmpdir(), 'replica-pg-'));
  const dir = path.join(root, 'data');
  const socketDir = path.join(root, 'sock');
  mkdirSync(socketDir);
  if (user) for (const p of [root, socketDir]) chownSync(p, user.uid, user.gid);

  try {
    const settings = await sql<{ name: string; setting: string }>(
      `postgres://postgres@127.0.0.1:${primary.port}/postgres`,
      'select name, setting from pg_settings where name = any($1)',
      [AT_LEAST_PRIMARY],
    );
    const backupMs = await baseBackup(primary.port, dir, user);
    const port = await freePort();
    const urlOf = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
    const server = await startCrashable({
      what: 'postgres replica',
      command: path.join(PG_BIN, 'postgres'),
      args: [
        ...['-D', dir, '-p', String(port), '-k', socketDir],
        ...['-c', 'listen_addresses=127.0.0.1', '-c', 'hot_standby=on', '-c', 'hot_standby_feedback=on'],
        ...['-c', 'fsync=off', '-c', 'shared_buffers=32MB'],
        ...settings.flatMap((s) => ['-c', `${s.name}=${s.setting}`]),
      ],
      user,
      ready: () => accepts(urlOf('postgres')),
      readyTimeoutMs: 60_000,
      readyIntervalMs: 100,
      port,
      url: urlOf('postgres'),
      dir,
      root,
    });
    return { ...server, urlOf, backupMs };
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
}

/**
 * `pg_basebackup` into `dir` (returns how long it took). -R: standby.signal and primary_conninfo; -X stream: the WAL
 * written meanwhile, over a second connection; -c fast: an immediate checkpoint; --no-sync: a test's copy needs no fsync.
 */
async function baseBackup(port: number, dir: string, user: ReturnType<typeof runAs>): Promise<number> {
  const started = Date.now();
  await run(
    path.join(PG_BIN, 'pg_basebackup'),
    [
      ...['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-D', dir],
      ...['-R', '-X', 'stream', '-c', 'fast', '--no-sync'],
    ],
    { ...(user ?? {}) },
  ).catch((err: Error & { stderr?: string }) => {
    throw new Error(`pg_basebackup failed: ${err.stderr || err.message}`, { cause: err });
  });
  return Date.now() - started;
}
