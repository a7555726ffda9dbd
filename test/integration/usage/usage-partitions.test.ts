// usage_events is range-partitioned by created_at (issue 13), on Postgres and on the embedded PGlite alike: the
// migration keeps every existing row (each lands in its month's partition, a row beyond the months made lands in the
// default partition); inserts land in their month; maintenance with an injected clock creates months ahead, moves
// stray rows out of the default partition, and retires months past retention, but never one holding calls the
// rollups have not folded in; the ledger is never touched.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { idTime, newId } from '../../../core/ids.js';
import { AHEAD_MONTHS, partitionFor, UsagePartitionsService } from '../../../core/usage/usage-partitions.js';
import { startEmbeddedDatabase } from '../../../db/embedded.js';
import { ormOptions } from '../../../db/mikro-orm.config.js';
import { createTestDatabase } from '../../helpers/db.js';
import { captureLogs } from '../../helpers/services.js';

const DAY = 86_400_000;
const BEFORE = 'Migration20261125100000_mcp_sessions';

/** A database with every migration up to the partitioning one, on either backend. */
async function openBackend(kind: 'postgres' | 'pglite'): Promise<{ url: string; close: () => Promise<void> }> {
  if (kind === 'postgres') {
    const db = await createTestDatabase({ empty: true });
    return { url: db.url, close: () => db.drop() };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-usage-partitions-'));
  const db = await startEmbeddedDatabase(path.join(dir, 'pglite'));
  return {
    url: db.url,
    close: async () => {
      await db.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

describe.each(['postgres', 'pglite'] as const)('usage_events partitions (%s)', (kind) => {
  const now = new Date();
  const clock = new ManualClock(now);
  let watermark: Date | null = null;
  let backend: { url: string; close: () => Promise<void> };
  let orm: MikroORM;
  let service: UsagePartitionsService;
  const legacy = {
    old: { id: newId('usage', now.getTime() - 250 * DAY), at: new Date(now.getTime() - 250 * DAY) },
    recent: { id: newId('usage', now.getTime()), at: now },
    far: { id: newId('usage', now.getTime() + 400 * DAY), at: new Date(now.getTime() + 400 * DAY) },
  };

  const q = <R extends object>(text: string, params: unknown[] = []) => orm.em.fork().execute<R[]>(text, params);
  const insertUsage = (id: string, at: Date) =>
    q(
      `insert into usage_events (id, org_id, key_id, api_slug, method, path, status, outcome, cost_cents, latency_ms,
         request_id, created_at)
       values (?, 'org_part', 'key_part', 'weather', 'GET', '/x', 200, 'success', 2, 10, ?, ?)`,
      [id, id, at.toISOString()],
    );
  const whereIs = async (id: string) =>
    (await q<{ part: string }>(`select tableoid::regclass::text as part from usage_events where id = ?`, [id]))[0]
      ?.part;
  const partitions = async () =>
    (
      await q<{ name: string }>(
        `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
          where i.inhparent = 'usage_events'::regclass order by 1`,
      )
    ).map((r) => r.name);

  beforeAll(async () => {
    backend = await openBackend(kind);
    const base = ormOptions({ url: backend.url, poolMax: 1 });
    // No snapshot: a half-migrated schema must not overwrite the committed one.
    orm = await MikroORM.init({ ...base, migrations: { ...base.migrations, snapshot: false } });
    await orm.getMigrator().up({ to: BEFORE });
    await q(`insert into orgs (id) values ('org_part')`);
    await q(
      `insert into api_keys (id, org_id, name, key_hash, key_prefix, scopes)
       values ('key_part', 'org_part', 'k', 'h', 'p', '{}')`,
    );
    for (const row of Object.values(legacy)) await insertUsage(row.id, row.at);
    await q(
      `insert into ledger_entries (id, org_id, kind, amount_cents, balance_after_cents, idempotency_key, reference)
       values ('led_part', 'org_part', 'grant', 5, 5, ?, ?)`,
      [`usage:${legacy.old.id}`, `usage:${legacy.old.id}`],
    );
    await orm.getMigrator().up();
    service = new UsagePartitionsService({
      orm,
      clock,
      logger: captureLogs().logger,
      retentionDays: 180,
      rollupsWatermark: () => Promise.resolve(watermark),
    });
  }, 180_000);
  afterAll(async () => {
    await orm?.close(true);
    await backend?.close();
  });

  it('is range-partitioned on created_at, keyed (id, created_at), with a default partition', async () => {
    const [p] = await q<{ strategy: string; key: string }>(
      `select p.partstrat as strategy, a.attname as key from pg_partitioned_table p
         join pg_attribute a on a.attrelid = p.partrelid and a.attnum = p.partattrs[0]
        where p.partrelid = 'usage_events'::regclass`,
    );
    expect(p).toEqual({ strategy: 'r', key: 'created_at' });
    const pk = await q<{ col: string }>(
      `select a.attname as col from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
        where i.indrelid = 'usage_events'::regclass and i.indisprimary order by a.attnum`,
    );
    expect(pk.map((r) => r.col)).toEqual(['id', 'created_at']);
    const names = await partitions();
    expect(names).toContain('usage_events_default');
    // Every month from the oldest row's through AHEAD_MONTHS ahead of the migration.
    for (let at = legacy.old.at; at <= new Date(now.getTime() + AHEAD_MONTHS * 28 * DAY); at = partitionFor(at).to) {
      expect(names).toContain(partitionFor(at).name);
    }
  });

  it('keeps every existing row through the migration, each in its month (beyond the months made: default)', async () => {
    expect(await whereIs(legacy.old.id)).toBe(partitionFor(legacy.old.at).name);
    expect(await whereIs(legacy.recent.id)).toBe(partitionFor(legacy.recent.at).name);
    expect(await whereIs(legacy.far.id)).toBe('usage_events_default');
    const [row] = await q<{ cost_cents: string; request_id: string }>(
      `select cost_cents, request_id from usage_events where id = ?`,
      [legacy.old.id],
    );
    expect(row).toEqual({ cost_cents: '2', request_id: legacy.old.id });
  });

  it('routes inserts to their month, and (id, created_at) stays unique', async () => {
    const id = newId('usage', now.getTime());
    await insertUsage(id, now);
    expect(await whereIs(id)).toBe(partitionFor(now).name);
    await expect(insertUsage(id, now)).rejects.toThrow(/usage_events_p\d{6}_pkey|duplicate key/);
    // The sweeper's fence writes the instant the id encodes: the gateway's own created_at, so the two collide.
    expect(idTime(id)).toEqual(now);
    const fenced = await q<{ id: string }>(
      `insert into usage_events (id, org_id, key_id, api_slug, method, path, status, outcome, latency_ms, request_id,
         created_at) values (?, 'org_part', 'key_part', '-', '-', '-', 0, 'failed', 0, ?, ?)
       on conflict (id, created_at) do nothing returning id`,
      [id, id, idTime(id)!.toISOString()],
    );
    expect(fenced).toEqual([]);
  });

  it('creates months ahead and moves rows out of the default partition into their month', async () => {
    const first = await service.ensure();
    expect(first).toEqual({ created: [partitionFor(legacy.far.at).name], moved: 1 });
    expect(await whereIs(legacy.far.id)).toBe(partitionFor(legacy.far.at).name);
    expect(await q(`select id from usage_events_default`)).toEqual([]);
    expect(await service.ensure()).toEqual({ created: [], moved: 0 });

    clock.set(now.getTime() + 150 * DAY);
    try {
      const later = await service.ensure();
      const expected = [];
      for (let i = 0; i <= AHEAD_MONTHS; i++) {
        const at = new Date(Date.UTC(clock.now().getUTCFullYear(), clock.now().getUTCMonth() + i, 1));
        expected.push(partitionFor(at).name);
      }
      expect(await partitions()).toEqual(expect.arrayContaining(expected));
      expect(later.created.length).toBeGreaterThan(0);
      const id = newId('usage', clock.now().getTime());
      await insertUsage(id, clock.now());
      expect(await whereIs(id)).toBe(partitionFor(clock.now()).name);
    } finally {
      clock.set(now);
    }
  });

  it('retires months past retention only once the rollups have folded them in, and keeps the ledger', async () => {
    const oldPart = partitionFor(legacy.old.at);
    const cutoff = new Date(now.getTime() - 180 * DAY);

    watermark = null; // the rollups never ran: nothing may go
    const none = await service.maintain();
    expect(none.retired).toEqual([]);
    expect(none.kept_unprocessed).toContain(oldPart.name);
    expect(await whereIs(legacy.old.id)).toBe(oldPart.name);

    watermark = legacy.old.at; // the old month's calls after this are not folded in yet
    const notYet = await service.maintain();
    expect(notYet.retired).not.toContain(oldPart.name);
    expect(notYet.kept_unprocessed).toContain(oldPart.name);

    watermark = new Date(oldPart.to.getTime() + 2 * 3_600_000); // folded in, late allowance included
    const some = await service.maintain();
    expect(some.retired).toContain(oldPart.name);
    expect(await whereIs(legacy.old.id)).toBeUndefined();
    expect(await partitions()).not.toContain(oldPart.name);

    watermark = now;
    await service.maintain();
    const left = await service.list();
    // Nothing left ends before the cutoff; the month holding the cutoff (not entirely older) stays.
    expect(left.every((p) => p.to > cutoff)).toBe(true);
    expect(left.map((p) => p.name)).toContain(partitionFor(cutoff).name);
    expect(await whereIs(legacy.recent.id)).toBe(partitionFor(now).name);
    expect(await partitions()).toContain('usage_events_default');

    // The books are untouched: the retired call's ledger row is still there.
    const ledger = await q<{ id: string }>(`select id from ledger_entries where reference = ?`, [
      `usage:${legacy.old.id}`,
    ]);
    expect(ledger).toEqual([{ id: 'led_part' }]);
  });
});
