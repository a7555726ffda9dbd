/**
 * `npm run backup -- [--out FILE] [--drain-timeout-ms N]`: a consistent logical backup of DATABASE_URL
 * (docs/operations.md, Backup and restore).
 *
 * 1. With Redis configured, waits (up to --drain-timeout-ms, default 10 s) until the usage streams are empty, so the
 *    calls already answered are in Postgres; what is still undrained is recorded in the manifest.
 * 2. Opens a repeatable-read transaction, exports its snapshot and reads the figures (migration level, row counts,
 *    ledger and balance sums) in it, then runs `pg_dump --format=custom --snapshot=…` on that same snapshot: the
 *    manifest describes exactly what the dump holds, under live traffic too.
 * 3. Writes FILE and FILE.manifest.json (with the dump's sha256), both mode 0600: the dump holds every key hash,
 *    sealed credential and email of the marketplace (issue 21 item 8). The script's umask is 077, so pg_dump's own
 *    file is created owner-only too, and each file is also opened and chmod-ed with 0600 explicitly.
 *
 * The embedded database (no DATABASE_URL) is not dumped by this script: stop `npm start` and copy DATA_DIR.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { ConfigError, loadConfig } from '../core/config.js';
import {
  MANIFEST_VERSION,
  manifestPath,
  passwordOf,
  readFigures,
  sha256File,
  undrainedUsage,
  withoutPassword,
  type BackupManifest,
} from '../platform/backup.js';

class UsageError extends Error {}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${cmd} exited with ${code}: ${err.trim()}`)),
    );
  });
}

async function waitForDrain(redis: Redis, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const n = await undrainedUsage(redis);
    if (n === 0 || Date.now() >= deadline) return n;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The dump and manifest are readable by their owner only, whatever the caller's umask. */
const PRIVATE_FILE = 0o600;

/** An empty owner-only file for pg_dump to write into (it keeps the mode of a file that exists). */
async function createPrivate(file: string): Promise<void> {
  await rm(file, { force: true });
  const handle = await open(file, 'wx', PRIVATE_FILE);
  await handle.close();
  await chmod(file, PRIVATE_FILE);
}

async function main(): Promise<number> {
  // Everything this process and its pg_dump create: owner-only.
  process.umask(0o077);
  let values;
  try {
    ({ values } = parseArgs({
      options: { out: { type: 'string' }, 'drain-timeout-ms': { type: 'string', default: '10000' } },
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const drainTimeoutMs = Number(values['drain-timeout-ms']);
  if (!Number.isSafeInteger(drainTimeoutMs) || drainTimeoutMs < 0)
    throw new UsageError('--drain-timeout-ms must be a whole number of milliseconds');
  const config = loadConfig();
  if (config.database.kind !== 'postgres') {
    console.error(
      `No DATABASE_URL: the embedded database (${config.database.dataDir}) is for development. Back it up by ` +
        `stopping "npm start" and copying ${path.dirname(config.database.dataDir)} (it holds the database and ` +
        'secrets.key); see docs/operations.md, Backup and restore.',
    );
    return 2;
  }
  const url = config.database.url;
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const out = path.resolve(values.out ?? path.join('backups', `marketplace-${stamp}.dump`));
  await mkdir(path.dirname(out), { recursive: true });

  // 1. Let answered calls reach Postgres first (they are durable in Redis either way: docs/durability.md).
  let undrained: number | null = null;
  if (config.counters.kind === 'redis') {
    const redis = new Redis(config.counters.url, { keyPrefix: config.counters.keyPrefix, maxRetriesPerRequest: 2 });
    try {
      undrained = await waitForDrain(redis, drainTimeoutMs);
    } finally {
      redis.disconnect();
    }
    if (undrained > 0) {
      console.error(
        `warning: ${undrained} answered calls were still on their way to Postgres after ${drainTimeoutMs} ms; ` +
          'they are in Redis (AOF) and reach Postgres later, but this backup does not hold them.',
      );
    }
  } else if (config.counters.kind === 'redis-cluster') {
    console.error('note: Redis Cluster: the drain is not awaited; undrained calls are not counted.');
  }

  // 2. One snapshot for the figures and the dump.
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const partial = `${out}.partial`;
  try {
    await client.query('begin transaction isolation level repeatable read, read only');
    const snapshot = (await client.query<{ s: string }>('select pg_export_snapshot() as s')).rows[0]!.s;
    const figures = await readFigures(client);
    const serverVersion = (await client.query<{ v: string }>('show server_version')).rows[0]!.v;
    const env: NodeJS.ProcessEnv = { ...process.env };
    const password = passwordOf(url);
    if (password) env.PGPASSWORD = password;
    const pgDumpVersion = (await run('pg_dump', ['--version'], env)).trim();
    await createPrivate(partial);
    await run(
      'pg_dump',
      ['--format=custom', `--snapshot=${snapshot}`, `--file=${partial}`, `--dbname=${withoutPassword(url)}`],
      env,
    );
    await client.query('commit');

    // 3. The dump and its manifest.
    await chmod(partial, PRIVATE_FILE);
    await rename(partial, out);
    const manifest: BackupManifest = {
      manifest_version: MANIFEST_VERSION,
      created_at: new Date().toISOString(),
      database: withoutPassword(url),
      format: 'pg_dump-custom',
      pg_dump_version: pgDumpVersion,
      server_version: serverVersion,
      dump: { file: path.basename(out), bytes: (await stat(out)).size, sha256: await sha256File(out) },
      undrained_usage_events: undrained,
      figures,
    };
    await rm(manifestPath(out), { force: true });
    await writeFile(manifestPath(out), `${JSON.stringify(manifest, null, 2)}\n`, { mode: PRIVATE_FILE, flag: 'wx' });
    await chmod(manifestPath(out), PRIVATE_FILE);
    console.log(JSON.stringify({ ok: true, dump: out, manifest: manifestPath(out), figures }, null, 2));
    return 0;
  } finally {
    await client.end().catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) console.error(`${err.message}\nusage: npm run backup -- [--out FILE]`);
    else console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  },
);
