// usage_events partition maintenance end to end: the worker creates this month's and the coming months' partitions
// at start and schedules `usage-partitions` daily; a run retires a month past USAGE_RETENTION_DAYS that the rollups
// have folded in, and the books still tie every call to its money (reconciliation reads ledger rows and accruals,
// which are kept forever, never usage rows).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReconciliationReport } from '../../core/billing/reconciliation.service.js';
import { SCHEDULES } from '../../core/temporal/contracts.js';
import { AHEAD_MONTHS, partitionFor } from '../../core/usage/usage-partitions.js';
import type { RunningHttpServer } from '../../platform/runtime/http-server.js';
import { createGatewayHandler, type GatewayHandler } from '../../gateway/app.js';
import { createPerson, type Person } from '../helpers/accounts.js';
import { sql } from '../helpers/db.js';
import { startFullStack, type FullStack } from '../helpers/full-stack.js';
import { describe as show, http, serve } from '../helpers/http.js';
import type { LiveApi } from '../helpers/listings.js';
import { recordHistory } from '../helpers/temporal.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { createConsumer, createPaidApi, closeAll } from '../helpers/fixtures.js';

describe('usagePartitionsWorkflow', () => {
  let s: FullStack;
  let upstream: Upstream;
  let gateway: GatewayHandler;
  let gw: RunningHttpServer;
  let consumer: Person;
  let api: LiveApi;

  beforeAll(async () => {
    upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    s = await startFullStack({ env: { USAGE_RETENTION_DAYS: '180' } });
    gateway = createGatewayHandler(s.services);
    gw = await serve(gateway);
    const provider = await createPerson(s.services);
    api = await createPaidApi(s.services, {
      provider: provider,
      baseUrl: upstream.url,
      endpoints: [{ method: 'GET', path: '/forecast', priceCents: 3 }],
    });
    consumer = await createConsumer(s.services, 100);
  });
  afterAll(async () => {
    expect(await s.services.ledger.findDrift()).toEqual([]);
    await closeAll(gw, gateway, s, upstream);
  });

  const partitions = async () =>
    (
      await sql<{ name: string }>(
        s.db.url,
        `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
          where i.inhparent = 'usage_events'::regclass`,
      )
    ).map((r) => r.name);

  it('is scheduled daily at 02:30 UTC, overlap skip; this month and the next ones exist from the start', async () => {
    const d = await s.temporal.client.schedule.getHandle(SCHEDULES.usagePartitions.id).describe();
    expect(d.action).toMatchObject({ type: 'startWorkflow', workflowType: 'usagePartitionsWorkflow' });
    expect(d.spec.calendars?.[0]).toMatchObject({ hour: [{ start: 2, end: 2, step: 1 }] });
    expect(d.spec.calendars?.[0]).toMatchObject({ minute: [{ start: 30, end: 30, step: 1 }] });
    expect(d.policies.overlap).toBe('SKIP');
    const names = await partitions();
    const now = new Date();
    for (let i = 0; i <= AHEAD_MONTHS; i++) {
      expect(names).toContain(partitionFor(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + i, 1))).name);
    }
    expect(names).toContain('usage_events_default');
  });

  it('retires a month past retention once rolled up; reconciliation still ties the call to its money', async () => {
    const res = await http(gw.url, 'GET', `/v1/proxy/${api.slug}/forecast`, { token: consumer.apiKey });
    expect(res.status, show(res)).toBe(200);
    await gateway.drain.flush(); // Postgres has the call (the usage drain: docs/durability.md)
    const [call] = await sql<{ id: string; part: string; batch_id: string }>(
      s.db.url,
      `select id, batch_id, tableoid::regclass::text as part from usage_events where org_id = $1`,
      [consumer.orgId],
    );
    expect(call!.part).toBe(partitionFor(new Date()).name);
    await s.services.temporal.runRollupsNow();

    // The call as if made 250 days ago: its month has no partition, so it moves to the default one.
    await sql(s.db.url, `update usage_events set created_at = created_at - interval '250 days' where id = $1`, [
      call!.id,
    ]);
    const [moved] = await sql<{ at: Date }>(s.db.url, `select created_at as at from usage_events where id = $1`, [
      call!.id,
    ]);
    const month = partitionFor(moved!.at).name;

    const run = await s.services.temporal.runUsagePartitionsNow('usage-partitions:test-run');
    expect(run).toMatchObject({ created: [month], moved_from_default: 1, kept_unprocessed: [] });
    expect(run.retired).toContain(month);
    expect(run.rollups_watermark).not.toBeNull();
    await recordHistory(s.temporal.address, 'usage-partitions:test-run', 'usage-partitions-run.json');
    expect(await sql(s.db.url, `select id from usage_events where id = $1`, [call!.id])).toEqual([]);
    expect(await partitions()).not.toContain(month);

    // The money is all in the ledger, by the call's usage batch (kept forever): the consumer's debit and the
    // provider's earning reference `usage_batch:{id}`, and the batch still says how many calls it booked.
    await s.services.earnings.foldAll();
    const ledger = await sql<{ kind: string; amount_cents: string }>(
      s.db.url,
      `select kind, amount_cents from ledger_entries where reference = $1 order by kind`,
      [`usage_batch:${call!.batch_id}`],
    );
    expect(ledger.map((l) => l.kind)).toEqual(expect.arrayContaining(['usage', 'provider_earning']));
    const [batch] = await sql(s.db.url, `select calls, org_id from usage_batches where id = $1`, [call!.batch_id]);
    expect(batch).toEqual({ calls: 1, org_id: consumer.orgId });
    const report = (await s.services.temporal.reconcileNow()) as ReconciliationReport;
    expect(report).toMatchObject({
      ok: true,
      drift: [],
      unbooked_payments: [],
      unmatched_calls: [],
      unmatched_batches: [],
      unbatched_calls: [],
    });

    // A second run changes nothing.
    const again = await s.services.temporal.runUsagePartitionsNow();
    expect(again).toMatchObject({ created: [], moved_from_default: 0, retired: [] });
  });
});
