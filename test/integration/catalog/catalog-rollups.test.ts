// The rollup steps on real Postgres with a manual clock and planted usage rows: error classes, percentiles and
// distinct consumers per window, a bounded backfill that converges, calls committed late, and the neutral score of a
// listing without traffic (a directory listing). The workflow around these steps: test/workflows/catalog-rollups.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { computeScore } from '../../../core/catalog/rollups/rollups.scoring.js';
import { newId } from '../../../core/ids.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { createLiveApi, type LiveApi } from '../../helpers/listings.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('catalog rollups (service steps)', () => {
  const clock = new ManualClock(new Date('2026-11-20T12:30:00Z'));
  let stack: TestStack;
  let provider: Person;
  let consumers: Person[];
  let api: LiveApi;
  let directory: LiveApi;

  beforeAll(async () => {
    stack = await createTestStack({ clock });
    provider = await createPerson(stack.services);
    consumers = [await createPerson(stack.services), await createPerson(stack.services)];
    api = await createLiveApi(stack.services, {
      providerOrgId: provider.orgId,
      baseUrl: 'http://127.0.0.1:9',
      endpoints: [{ method: 'GET', path: '/x', priceCents: 5 }],
    });
    directory = await createLiveApi(stack.services, {
      providerOrgId: provider.orgId,
      baseUrl: 'http://127.0.0.1:9',
      endpoints: [],
    });
    await sql(stack.db.url, `update apis set source = 'directory', updated_at = $2 where id = $1`, [
      directory.apiId,
      clock.now(),
    ]);
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** Plant calls as the gateway commits them. */
  async function plant(
    rows: { at: Date; status: number; latency: number; consumer?: number; cost?: number }[],
  ): Promise<void> {
    for (const r of rows) {
      const c = consumers[r.consumer ?? 0]!;
      const ok = r.status >= 200 && r.status < 300;
      await sql(
        stack.db.url,
        `insert into usage_events (id, org_id, key_id, api_slug, api_id, method, path, status, outcome, cost_cents,
           latency_ms, request_id, created_at)
         values ($1, $2, $3, $4, $5, 'GET', '/x', $6, $7, $8, $9, $10, $11)`,
        [
          newId('usage'),
          c.orgId,
          c.keyId,
          api.slug,
          api.apiId,
          r.status,
          ok ? 'success' : 'failed',
          ok ? (r.cost ?? 5) : 0,
          r.latency,
          newId('request'),
          r.at,
        ],
      );
    }
  }
  const stats = async (window: string) =>
    (await sql(stack.db.url, `select * from api_stats where api_id = $1 and "window" = $2`, [api.apiId, window]))[0];
  const rollups = () => stack.services.rollups;

  it('backfills at most three days per run and converges on exact windows', async () => {
    const now = clock.now().getTime();
    // 10 days ago, 5 days ago, 2 days ago, and this hour: one call each day plus classes of failure now.
    await plant([
      { at: new Date(now - 10 * DAY), status: 200, latency: 40 },
      { at: new Date(now - 5 * DAY), status: 200, latency: 40, consumer: 1 },
      { at: new Date(now - 2 * DAY), status: 200, latency: 40 },
      { at: new Date(now - 10 * 60_000), status: 200, latency: 12 },
      { at: new Date(now - 9 * 60_000), status: 200, latency: 14 },
      { at: new Date(now - 8 * 60_000), status: 404, latency: 20 },
      { at: new Date(now - 7 * 60_000), status: 503, latency: 30 },
      { at: new Date(now - 6 * 60_000), status: 429, latency: 30 },
      { at: new Date(now - 5 * 60_000), status: 0, latency: 1500 },
    ]);
    const first = await rollups().rollupUsage();
    expect(first.full_refresh).toBe(true);
    expect(first.from).toBe(new Date(Math.floor((now - 10 * DAY) / HOUR) * HOUR).toISOString());
    expect(new Date(first.watermark).getTime()).toBe(new Date(first.from).getTime() + 3 * DAY);
    expect(await stats('30d')).toMatchObject({ calls: '1' });

    let runs = 1;
    while ((await rollups().rollupUsage()).watermark !== clock.now().toISOString()) runs++;
    expect(runs).toBeLessThanOrEqual(4);
    expect(await stats('30d')).toMatchObject({
      calls: '9',
      successes: '5',
      gmv_cents: '25',
      unique_consumers: 2,
      errors: { '4xx': 1, '5xx': 2, timeout: 1 },
    });
    expect(await stats('7d')).toMatchObject({ calls: '8', unique_consumers: 2 });
    expect(await stats('24h')).toMatchObject({ calls: '6', successes: '2', unique_consumers: 1 });
    const day = await stats('24h');
    expect(day!.p50_ms).toBeGreaterThanOrEqual(10);
    expect(day!.p50_ms).toBeLessThanOrEqual(30);
    expect(day!.p95_ms).toBeGreaterThanOrEqual(1000);
  });

  it('counts a call committed late, and a rerun changes nothing', async () => {
    clock.advance(60_000);
    const before = await stats('30d');
    await rollups().rollupUsage();
    expect(await stats('30d')).toEqual({ ...before, updated_at: expect.anything() });
    // Committed now, stamped three minutes ago (before the watermark): still counted by the next run.
    await plant([{ at: new Date(clock.now().getTime() - 3 * 60_000), status: 200, latency: 10 }]);
    clock.advance(1_000);
    await rollups().rollupUsage();
    expect(await stats('30d')).toMatchObject({ calls: '10', successes: '6' });
  });

  it('scores a listing without traffic neutrally and one with traffic from its stats', async () => {
    await rollups().rollupScores();
    const rows = await sql<{ api_id: string; svc_score: number; reliability: number; freshness: number }>(
      stack.db.url,
      `select api_id, svc_score, reliability, latency, usage, value, freshness from api_scores order by api_id`,
    );
    const dir = rows.find((r) => r.api_id === directory.apiId)!;
    expect(dir).toMatchObject({ svc_score: 50, reliability: 0.5, latency: 0.5, usage: 0, value: 0.5 });
    expect(dir.freshness).toBeGreaterThan(0.99);
    const scored = rows.find((r) => r.api_id === api.apiId)!;
    const s30 = (await stats('30d'))!;
    expect(scored.svc_score).toBe(
      computeScore({
        successes: 6,
        judged: 6 + 2 + 1,
        p95Ms: s30.p95_ms as number,
        minPriceCents: 5,
        ageDays: 0,
        marketMaxSuccesses: 6,
      }).svc_score,
    );
    const history = await sql(stack.db.url, `select count(*)::int as n from api_score_history`);
    expect(history[0]!.n).toBe(2);
  });
});
