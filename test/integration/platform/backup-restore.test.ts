// The tested restore of docs/operations.md (Backup and restore): paid calls through the real gateway on real Redis and
// Postgres (some with an Idempotency-Key, one replayed), the drain awaited, then `scripts/backup.ts` and
// `scripts/restore.ts` run as real processes: the database is dropped and restored under the same name, the gateway's
// fast state in Redis is flushed, and the restored marketplace is held to the manifest: books clean, counts and sums
// equal, the same API key authenticates and pays, an Idempotency-Key used before the backup replays (no second debit)
// from Postgres alone, and the listing's sealed upstream credential still decrypts with the same SECRETS_KEY.
// Also: a tampered dump is refused by its checksum, and a non-empty target only with --force.
import { spawn } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { manifestPath, type BackupManifest } from '../../../platform/backup.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { checkBooks, type CallAnswer } from '../../helpers/books.js';
import { createTestDatabase, sql, type TestDatabase } from '../../helpers/db.js';
import { PG_ADMIN_URL, REDIS_URL, ROOT } from '../../helpers/env.js';
import { serve } from '../../helpers/http.js';
import { createLiveApi, type LiveApi } from '../../helpers/listings.js';
import { call } from '../../helpers/paid-load.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { createConsumer } from '../../helpers/fixtures.js';

const PRICE = 3;
const CREDIT = 1_000;
const UPSTREAM_SECRET = 'upstream-secret-sealed-in-postgres';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a script as the operator would (its own process, configured only by its environment). */
function runScript(script: string, args: string[], env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join('scripts', script), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'test', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
const show = (r: Ran) => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

async function fastStateKeys(prefix: string): Promise<string[]> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  await redis.connect();
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}sp:*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
    return keys;
  } finally {
    redis.disconnect();
  }
}

async function databaseExists(name: string): Promise<boolean> {
  return (await sql(PG_ADMIN_URL, 'select 1 from pg_database where datname = $1', [name])).length === 1;
}

const ledgerSum = async (url: string, orgId: string) =>
  Number(
    (
      await sql<{ s: string }>(
        url,
        'select coalesce(sum(amount_cents), 0) as s from ledger_entries where org_id = $1',
        [orgId],
      )
    )[0]!.s,
  );

describe('backup and restore', () => {
  let dir: string;
  let upstream: Upstream;
  let stack: TestStack;
  let gateway: GatewayHandler | undefined;
  let server: RunningHttpServer | undefined;
  let restored: TestStack | undefined;
  let consumer: Person;
  let api: LiveApi;
  let prefix: string;
  let dump: string;
  let manifest: BackupManifest;
  /** Answers of the calls made before the backup (all booked in it). */
  const before: CallAnswer[] = [];
  const others: TestDatabase[] = [];
  let stackClosed = false;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mp-backup-'));
    upstream = await startUpstream((req, res) => {
      const ok = req.headers.authorization === `Bearer ${UPSTREAM_SECRET}`;
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok }));
    });
    stack = await createTestStack({ env: { GATEWAY_RATE_LIMIT_PER_MIN: '100000' } });
    prefix = stack.config.counters.keyPrefix;
    gateway = createGatewayHandler(stack.services);
    server = await serve(gateway);
    const provider = await createPerson(stack.services);
    consumer = await createConsumer(stack.services, CREDIT);
    api = await createLiveApi(stack.services, {
      providerOrgId: provider.orgId,
      baseUrl: upstream.url,
      endpoints: [{ method: 'GET', path: '/paid', priceCents: PRICE }],
      credential: { secret: UPSTREAM_SECRET, injection: 'bearer' },
    });
  });

  afterAll(async () => {
    await server?.close();
    await gateway?.close();
    await restored?.services.close();
    if (!stackClosed) await stack?.services.close();
    await stack?.db.drop();
    for (const db of others) await db.drop();
    const leftovers = await fastStateKeys(prefix ?? 'none:');
    if (leftovers.length) {
      const redis = new Redis(REDIS_URL);
      await redis.unlink(...leftovers);
      redis.disconnect();
    }
    await upstream?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('backs up a database with paid calls in it: the manifest records what the dump holds', async () => {
    for (let i = 0; i < 10; i++) {
      const answer = await call(server!.url, api.slug, consumer.apiKey, i < 4 ? `before-${i}` : undefined);
      expect(answer.status, JSON.stringify(answer)).toBe(200);
      before.push(answer);
    }
    const replay = await call(server!.url, api.slug, consumer.apiKey, 'before-0');
    expect(replay).toMatchObject({ status: 200, replayed: true });
    before.push(replay);
    expect(upstream.seen).toHaveLength(10);
    await checkBooks(stack.db.url, before);

    dump = path.join(dir, 'marketplace.dump');
    const ran = await runScript('backup.ts', ['--out', dump], {
      DATABASE_URL: stack.db.url,
      REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
    });
    expect(ran.code, show(ran)).toBe(0);
    // The dump holds key hashes, sealed credentials and emails: owner-only, whatever the umask (issue 21 item 8).
    for (const file of [dump, manifestPath(dump)]) {
      expect((await stat(file)).mode & 0o777, file).toBe(0o600);
    }
    manifest = JSON.parse(await readFile(manifestPath(dump), 'utf8')) as BackupManifest;
    expect(manifest.undrained_usage_events).toBe(0);
    expect(manifest.dump.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.figures.migrations.count).toBeGreaterThan(0);
    expect(manifest.figures.rows).toMatchObject({
      orgs: 2,
      api_keys: 2,
      apis: 1,
      usage_events: 10,
      idempotency_records: 4,
    });
    expect(manifest.figures.usage_charged_cents).toBe(10 * PRICE);
    expect(manifest.figures.ledger_sum_cents).toBe(manifest.figures.org_balance_sum_cents);
    expect(await ledgerSum(stack.db.url, consumer.orgId)).toBe(CREDIT - 10 * PRICE);
  });

  it('restores into a dropped database: books clean, figures equal, the key pays, a replay replays from Postgres', async () => {
    // A call answered after the backup: the restore does not have it (docs/operations.md says what that means).
    const after = await call(server!.url, api.slug, consumer.apiKey, 'after-backup');
    expect(after.status).toBe(200);
    await server!.close();
    await gateway!.close();
    server = undefined;
    gateway = undefined;
    await stack.services.close();
    stackClosed = true;
    expect((await fastStateKeys(prefix)).length).toBeGreaterThan(0);
    await stack.db.drop();
    expect(await databaseExists(stack.db.name)).toBe(false);

    const ran = await runScript('restore.ts', [dump, '--target', stack.db.url, '--flush-redis'], {
      REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
    });
    expect(ran.code, show(ran)).toBe(0);
    expect(ran.stdout).toContain('books check: clean');
    expect(ran.stdout).toContain('restore check: ok');
    // Only the (empty) usage streams and the list of buckets in use may be left of the fast state.
    expect((await fastStateKeys(prefix)).filter((k) => !/sp:(\{\d+\}:u|buckets)$/.test(k))).toEqual([]);

    const [figures] = await sql<{ usage: string; idem: string; ledger: string }>(
      stack.db.url,
      `select (select count(*) from usage_events) as usage, (select count(*) from idempotency_records) as idem,
              (select coalesce(sum(amount_cents), 0) from ledger_entries) as ledger`,
    );
    expect(figures).toEqual({
      usage: String(manifest.figures.rows.usage_events),
      idem: String(manifest.figures.rows.idempotency_records),
      ledger: String(manifest.figures.ledger_sum_cents),
    });
    const balance = CREDIT - 10 * PRICE;
    expect(await ledgerSum(stack.db.url, consumer.orgId)).toBe(balance);

    // The marketplace again, on the restored database and the flushed Redis, with the same SECRETS_KEY.
    restored = await createTestStack({
      db: stack.db,
      env: { GATEWAY_RATE_LIMIT_PER_MIN: '100000', REDIS_KEY_PREFIX: prefix },
    });
    gateway = createGatewayHandler(restored.services);
    server = await serve(gateway);
    const seen = upstream.seen.length;

    const replay = await call(server.url, api.slug, consumer.apiKey, 'before-1');
    expect(replay, 'a key used before the backup replays from Postgres').toMatchObject({
      status: 200,
      replayed: true,
      costCents: PRICE,
    });
    expect(upstream.seen.length, 'a replay does not call the upstream').toBe(seen);

    const paid = await call(server.url, api.slug, consumer.apiKey, undefined);
    expect(paid, 'the same key authenticates and pays').toMatchObject({ status: 200, costCents: PRICE });
    expect(upstream.seen.at(-1)?.headers.authorization, 'the sealed credential decrypts').toBe(
      `Bearer ${UPSTREAM_SECRET}`,
    );
    // The key first used after the backup is unknown to the restored books: it runs (and is charged) again.
    const rerun = await call(server.url, api.slug, consumer.apiKey, 'after-backup');
    expect(rerun).toMatchObject({ status: 200, replayed: false, costCents: PRICE });

    await checkBooks(restored.db.url, [...before, replay, paid, rerun]);
    expect(await ledgerSum(restored.db.url, consumer.orgId), 'no second debit for the replay').toBe(
      balance - 2 * PRICE,
    );
    const report = await restored.services.reconciliation.run();
    expect(report.ok, JSON.stringify(report)).toBe(true);
  });

  it('refuses a tampered dump (checksum) before touching the target', async () => {
    const tampered = path.join(dir, 'tampered.dump');
    await copyFile(dump, tampered);
    await copyFile(manifestPath(dump), manifestPath(tampered));
    const bytes = await readFile(tampered);
    const at = Math.floor(bytes.length / 2);
    bytes.writeUInt8(bytes.readUInt8(at) ^ 0xff, at);
    await writeFile(tampered, bytes);
    const name = `mp_t_restore_${Date.now().toString(36)}`;
    const ran = await runScript('restore.ts', [tampered, '--target', `postgres://postgres@127.0.0.1:5432/${name}`], {});
    expect(ran.code, show(ran)).toBe(1);
    expect(ran.stderr).toContain('checksum mismatch');
    expect(await databaseExists(name)).toBe(false);
  });

  it('refuses a non-empty target without --force, and restores over it with --force', async () => {
    const target = await createTestDatabase();
    others.push(target);
    const refused = await runScript('restore.ts', [dump, '--target', target.url], {});
    expect(refused.code, show(refused)).toBe(1);
    expect(refused.stderr).toContain('is not empty');
    expect(refused.stderr).toContain('--force');

    const forced = await runScript('restore.ts', [dump, '--target', target.url, '--force'], {});
    expect(forced.code, show(forced)).toBe(0);
    expect(forced.stdout).toContain('restore check: ok');
    expect(await ledgerSum(target.url, consumer.orgId)).toBe(CREDIT - 10 * PRICE);
  });
});
