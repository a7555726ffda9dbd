/**
 * A dedicated Postgres 15 cluster for crash tests: `initdb` into a fresh directory, the postmaster on a port of its own
 * with fsync on, one database migrated exactly as the project migrates (db/mikro-orm.config.ts's migrateUp, plus the
 * rollup tables the template database gets). `kill()` SIGKILLs the postmaster's whole process group (every backend
 * too, as a machine crash would), `restart()` starts it again on the same directory and port: crash recovery replays
 * the WAL, and what was committed is still there.
 *
 * Postgres refuses to run as root, so when the tests run as root the cluster's files belong to the `postgres` user and
 * the processes run as it (spawn's uid/gid).
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { initOrm, migrateUp } from '../../db/mikro-orm.config.js';
import { startCrashable, type CrashableServer } from './crashable.js';
import { freePort, waitFor } from './ports.js';
import { ensureRollupTables } from './rollups.js';

export const PG_BIN = '/usr/lib/postgresql/15/bin';

/** `url` is the migrated database's; `kill()` takes every backend too and waits until all are gone. */
export type ScratchPostgres = CrashableServer;

/** The `postgres` OS user's ids when the tests run as root (Postgres refuses to run as root), else undefined. */
export function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

export async function startScratchPostgres(options: { database?: string } = {}): Promise<ScratchPostgres> {
  const user = runAs();
  const root = mkdtempSync(path.join(os.tmpdir(), 'scratch-pg-'));
  const dir = path.join(root, 'data');
  const socketDir = path.join(root, 'sock');
  mkdirSync(dir, { mode: 0o700 });
  mkdirSync(socketDir);
  if (user) for (const p of [root, dir, socketDir]) chownSync(p, user.uid, user.gid);
  execFileSync(
    path.join(PG_BIN, 'initdb'),
    ['-D', dir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-instructions'],
    { stdio: 'pipe', ...(user ?? {}) },
  );
  const port = await freePort();
  const database = options.database ?? 'crash';
  const url = `postgres://postgres@127.0.0.1:${port}/${database}`;
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const server = await startCrashable({
    what: 'postgres',
    command: path.join(PG_BIN, 'postgres'),
    args: [
      '-D',
      dir,
      '-p',
      String(port),
      '-k',
      socketDir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=on',
      '-c',
      'synchronous_commit=on',
      '-c',
      'max_connections=200',
      '-c',
      'shared_buffers=32MB',
    ],
    user,
    ready: () => accepts(adminUrl),
    readyTimeoutMs: 60_000,
    readyIntervalMs: 100,
    afterKill: async (c) => {
      // Backends are in the postmaster's group; the next postmaster refuses to start while any still holds the old
      // shared memory, so wait for all of them.
      await waitFor(() => Promise.resolve(!groupAlive(c.pid!)), {
        timeoutMs: 15_000,
        what: 'postgres backends to exit',
      });
      // The postmaster.pid is stale now; Postgres copes with a dead pid, but a reused one would stop it starting.
      const pidFile = path.join(dir, 'postmaster.pid');
      if (existsSync(pidFile)) {
        const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
        if (pid === c.pid) rmSync(pidFile, { force: true });
      }
    },
    port,
    url,
    dir,
    root,
  });
  try {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query(`create database "${database}"`);
    } finally {
      await admin.end();
    }
    const orm = await initOrm({ url, poolMax: 2 });
    try {
      await migrateUp(orm);
    } finally {
      await orm.close(true);
    }
    await ensureRollupTables(url);
  } catch (err) {
    await server.stop();
    throw new Error(`scratch postgres setup failed: ${(err as Error).message}\n${server.output().slice(-3_000)}`, {
      cause: err,
    });
  }
  return server;
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether a server at `url` accepts a connection and answers a query. */
export async function accepts(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
