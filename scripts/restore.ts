/**
 * `npm run restore -- FILE [--target DATABASE_URL] [--force] [--flush-redis]`: restore a backup written by
 * `npm run backup` (docs/operations.md, Backup and restore), then prove it.
 *
 * 1. The dump's size and sha256 must equal its manifest's (FILE.manifest.json); a tampered or truncated dump is refused.
 * 2. The target (--target, else DATABASE_URL) is created if it does not exist; one that holds any table is refused
 *    unless --force, which drops its schemas first.
 * 3. `pg_restore --no-owner --no-privileges --exit-on-error --single-transaction`: all or nothing.
 * 4. Pending migrations are applied (the code may be newer than the backup).
 * 5. The books check (core/billing/reconciliation.service.ts) must be clean, and the restored row counts, ledger sum,
 *    balance sum and usage charged must equal the manifest's. Any difference: exit 1.
 * 6. --flush-redis deletes the gateway's fast state under REDIS_KEY_PREFIX (it is ahead of the restored database:
 *    cached balances, spend, idempotency records); gateways rebuild it from Postgres on each org's next call.
 */
import { spawn } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { systemClock } from '../core/clock.js';
import { ConfigError, loadConfig } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import {
  compareFigures,
  flushFastState,
  manifestPath,
  passwordOf,
  readFigures,
  sha256File,
  withoutPassword,
  type BackupManifest,
  type BookFigures,
} from '../platform/backup.js';

const USAGE = 'usage: npm run restore -- FILE [--target DATABASE_URL] [--force] [--flush-redis]';

class UsageError extends Error {}
class Refused extends Error {}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'inherit', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} exited with ${code}: ${err.trim()}`)),
    );
  });
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Connect to the target, creating the database first when it does not exist. */
async function ensureDatabase(url: string): Promise<'existing' | 'created'> {
  try {
    await withClient(url, () => Promise.resolve());
    return 'existing';
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') throw err;
  }
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.replace(/^\//, ''));
  u.pathname = '/postgres';
  await withClient(u.toString(), (c) => c.query(`create database "${name.replace(/"/g, '""')}"`));
  return 'created';
}

/** Tables, views and sequences outside the system schemas: anything there means the target is in use. */
async function userRelations(c: pg.Client): Promise<number> {
  const { rows } = await c.query<{ n: string }>(
    `select count(*) as n from pg_class r join pg_namespace n on n.oid = r.relnamespace
      where n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_%'
        and r.relkind in ('r', 'p', 'v', 'm', 'S', 'f')`,
  );
  return Number(rows[0]!.n);
}

/** --force: every non-system schema dropped (their tables, types, functions, extensions), an empty public left. */
async function emptyDatabase(c: pg.Client): Promise<void> {
  const { rows } = await c.query<{ nspname: string }>(
    `select nspname from pg_namespace where nspname not in ('pg_catalog', 'information_schema')
        and nspname not like 'pg\\_%'`,
  );
  for (const { nspname } of rows) await c.query(`drop schema "${nspname.replace(/"/g, '""')}" cascade`);
  await c.query('create schema public');
}

function printFigures(expected: BookFigures, actual: BookFigures): void {
  const lines: [string, string, string][] = [['', 'backup', 'restored']];
  lines.push(['migrations', String(expected.migrations.count), String(actual.migrations.count)]);
  for (const table of Object.keys(expected.rows))
    lines.push([table, String(expected.rows[table]), String(actual.rows[table] ?? '-')]);
  for (const k of ['ledger_sum_cents', 'org_balance_sum_cents', 'usage_charged_cents'] as const)
    lines.push([k, String(expected[k]), String(actual[k])]);
  const w = [0, 1, 2].map((i) => Math.max(...lines.map((l) => l[i]!.length)));
  for (const l of lines) console.log(`${l[0].padEnd(w[0]!)}  ${l[1].padStart(w[1]!)}  ${l[2].padStart(w[2]!)}`);
}

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        target: { type: 'string' },
        force: { type: 'boolean', default: false },
        'flush-redis': { type: 'boolean', default: false },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new UsageError('give exactly one backup file');
  const file = path.resolve(positionals[0]!);
  const config = loadConfig();
  const target = values.target ?? (config.database.kind === 'postgres' ? config.database.url : undefined);
  if (!target) throw new UsageError('no target: pass --target or set DATABASE_URL');

  // 1. The dump is the one the manifest describes.
  const manifest = JSON.parse(await readFile(manifestPath(file), 'utf8')) as BackupManifest;
  const bytes = (await stat(file)).size;
  const sha256 = await sha256File(file);
  if (bytes !== manifest.dump.bytes || sha256 !== manifest.dump.sha256) {
    throw new Refused(
      `checksum mismatch: ${file} is ${bytes} bytes, sha256 ${sha256}; its manifest says ${manifest.dump.bytes} ` +
        `bytes, sha256 ${manifest.dump.sha256}. The dump is damaged or not the one the manifest describes.`,
    );
  }
  console.log(`dump verified: ${path.basename(file)}, ${bytes} bytes, sha256 ${sha256}`);
  console.log(`backup of ${manifest.database} taken ${manifest.created_at}`);

  // 2. A target of our own.
  const created = await ensureDatabase(target);
  await withClient(target, async (c) => {
    const n = await userRelations(c);
    if (n === 0) return;
    if (!values.force) {
      throw new Refused(
        `the target ${withoutPassword(target)} is not empty (${n} tables, views or sequences); ` +
          'restore into a new database, or pass --force to drop its schemas first',
      );
    }
    console.log(`--force: dropping the schemas of ${withoutPassword(target)} (${n} relations)`);
    await emptyDatabase(c);
  });
  console.log(`target: ${withoutPassword(target)} (${created})`);

  // 3. Restore, all or nothing.
  const env: NodeJS.ProcessEnv = { ...process.env };
  const password = passwordOf(target);
  if (password) env.PGPASSWORD = password;
  await run(
    'pg_restore',
    [
      '--no-owner',
      '--no-privileges',
      '--exit-on-error',
      '--single-transaction',
      `--dbname=${withoutPassword(target)}`,
      file,
    ],
    env,
  );
  console.log('pg_restore: done');

  // 4 and 5. Migrations to the code's level, then the books (loaded only now: the ORM takes seconds to load, and the
  // refusals above should be quick).
  const [{ initOrm, migrateUp }, { ReconciliationService }, { LedgerService }] = await Promise.all([
    import('../db/mikro-orm.config.js'),
    import('../core/billing/reconciliation.service.js'),
    import('../core/billing/ledger.service.js'),
  ]);
  const logger = createLogger({ level: 'info', name: 'restore' }, process.stderr);
  const orm = await initOrm({ url: target, poolMax: 2 });
  let problems: string[];
  try {
    const applied = await migrateUp(orm);
    console.log(
      applied.length ? `migrations applied: ${applied.join(', ')}` : 'migrations: already at the current level',
    );
    const report = await new ReconciliationService({
      orm,
      ledger: new LedgerService(orm),
      clock: systemClock,
      logger,
    }).run();
    console.log(
      `books check: ${report.ok ? 'clean' : 'NOT CLEAN'} (${report.orgs_checked} orgs)` +
        (report.ok ? '' : `\n${JSON.stringify(report, null, 2)}`),
    );
    const actual = await withClient(target, readFigures);
    printFigures(manifest.figures, actual);
    problems = compareFigures(manifest.figures, actual);
    if (!report.ok) problems.push('the books check found problems (above)');
  } finally {
    await orm.close(true);
  }

  // 6. The fast state.
  if (values['flush-redis']) {
    if (config.counters.kind === 'redis') {
      const redis = new Redis(config.counters.url, { keyPrefix: config.counters.keyPrefix, maxRetriesPerRequest: 2 });
      try {
        const { deleted, keptUsageEvents } = await flushFastState(redis, config.counters.keyPrefix);
        console.log(`redis: deleted ${deleted} fast-state keys under "${config.counters.keyPrefix}sp:"`);
        if (keptUsageEvents > 0) {
          console.log(
            `redis: kept ${keptUsageEvents} undrained usage events (answered calls Postgres lacks); ` +
              'a gateway books them once it runs',
          );
        }
      } finally {
        redis.disconnect();
      }
    } else {
      console.log('redis: --flush-redis needs REDIS_URL (on a cluster, delete the sp:* keys per master by hand)');
    }
  } else {
    console.log(
      "reminder: delete the gateways' fast state before they serve again (--flush-redis, or docs/operations.md)",
    );
  }

  if (problems.length) {
    console.error(`restore check FAILED:\n- ${problems.join('\n- ')}`);
    return 1;
  }
  console.log('restore check: ok');
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) console.error(`${err.message}\n${USAGE}`);
    else if (err instanceof Refused) console.error(`refused: ${err.message}`);
    else console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  },
);
