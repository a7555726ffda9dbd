// The catalog rollups end to end: paid, failed and free calls through the real gateway, then the `catalog-rollups`
// schedule (triggered) makes stats, boards, ranks and the market overview reflect them within 60 s; reruns change
// nothing (idempotent), new calls are folded in from the watermark (incremental), a moved clock adds one history
// point per day, a price change and a climber reach the activity feed; every route validates its input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../core/clock.js';
import { wilsonLowerBound } from '../../core/catalog/rollups/rollups.scoring.js';
import { SCHEDULES } from '../../core/temporal/contracts.js';
import type { RunningHttpServer } from '../../platform/runtime/http-server.js';
import { createGatewayHandler, type GatewayHandler } from '../../gateway/app.js';
import { createPerson, type Person } from '../helpers/accounts.js';
import { sql } from '../helpers/db.js';
import { startFullStack, type FullStack } from '../helpers/full-stack.js';
import { describe as show, expectFailure, http, serve } from '../helpers/http.js';
import { createLiveApi, type LiveApi } from '../helpers/listings.js';
import { recordHistory } from '../helpers/temporal.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { createConsumer, closeAll } from '../helpers/fixtures.js';
import { expectNoDrift } from '../helpers/books.js';

/** Real time plus an offset the test moves (a day later, for history points). */
class OffsetClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}

const DAY = 86_400_000;

describe('catalogRollupsWorkflow', () => {
  const clock = new OffsetClock();
  let s: FullStack;
  let upstream: Upstream;
  let gateway: GatewayHandler;
  let gw: RunningHttpServer;
  let provider: Person;
  let consumer: Person;
  let paid: LiveApi;
  let free: LiveApi;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      const fail = req.url?.includes('/fail');
      res.writeHead(fail ? 500 : 200, { 'content-type': 'application/json' });
      res.end(fail ? '{"error":"boom"}' : '{"ok":true}');
    });
    s = await startFullStack({ clock, env: { GATEWAY_RATE_LIMIT_PER_MIN: '100000' } });
    gateway = createGatewayHandler(s.services);
    gw = await serve(gateway);
    provider = await createPerson(s.services);
    await sql(s.db.url, `insert into profiles (org_id, display_name, slug) values ($1, 'Skyline Data', 'skyline')`, [
      provider.orgId,
    ]);
    paid = await createLiveApi(s.services, {
      providerOrgId: provider.orgId,
      baseUrl: upstream.url,
      endpoints: [
        { method: 'GET', path: '/forecast', priceCents: 2 },
        { method: 'GET', path: '/fail', priceCents: 2 },
      ],
    });
    free = await createLiveApi(s.services, {
      providerOrgId: provider.orgId,
      baseUrl: upstream.url,
      endpoints: [{ method: 'GET', path: '/ping', priceCents: 0 }],
    });
    await sql(
      s.db.url,
      `update apis set category = 'weather', name = 'Skyline Forecast', summary = 'Hourly forecasts' where id = $1`,
      [paid.apiId],
    );
    consumer = await createConsumer(s.services, 1_000);
  });
  afterAll(async () => {
    await expectNoDrift(gateway, s?.services);
    await closeAll(gw, gateway, s, upstream);
  });

  const call = async (api: LiveApi, path: string, expected: number) => {
    const res = await http(gw.url, 'GET', `/v1/proxy/${api.slug}${path}`, { token: consumer.apiKey });
    expect(res.status, show(res)).toBe(expected);
    // The rollups read Postgres, which has the call moments after its answer (the usage drain: docs/durability.md).
    await gateway.drain.flush();
  };
  const get = (path: string, token?: string) => http(s.base, 'GET', path, { token });
  const stats = async (apiId: string, window = '24h') =>
    (
      await sql<{ calls: string; successes: string; gmv_cents: string; errors: unknown; unique_consumers: number }>(
        s.db.url,
        `select calls, successes, gmv_cents, errors, unique_consumers, p50_ms, p95_ms from api_stats
          where api_id = $1 and "window" = $2`,
        [apiId, window],
      )
    )[0];

  it('is scheduled once an hour (overlap skip), each run making a pass every 30 s for the hour', async () => {
    const d = await s.temporal.client.schedule.getHandle(SCHEDULES.catalogRollups.id).describe();
    expect(d.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'catalogRollupsWorkflow',
      args: [{ loop: { forMs: 3_570_000, everyMs: 30_000 } }],
    });
    expect(d.spec.intervals?.[0]?.every).toBe(3_600_000);
    expect(d.policies.overlap).toBe('SKIP');
  });

  it("the schedules start a handful of runs an hour, not the operator's whole list (issue 22)", async () => {
    // Temporal's own answer: each schedule's next action times, counted over the next hour.
    const hour = Date.now() + 3_600_000;
    const perSchedule: Record<string, number> = {};
    for (const { id } of Object.values(SCHEDULES)) {
      const d = await s.temporal.client.schedule.getHandle(id).describe();
      perSchedule[id] = d.info.nextActionTimes.filter((t) => t.getTime() <= hour).length;
    }
    expect(perSchedule[SCHEDULES.catalogRollups.id]).toBe(1);
    const total = Object.values(perSchedule).reduce((a, b) => a + b, 0);
    expect(total, JSON.stringify(perSchedule)).toBeLessThanOrEqual(5); // was 120+ with a rollups run every 30 s
  });

  it('a looping run makes a pass every interval for its time, then ends', async () => {
    const result = await s.temporal.client.workflow.execute('catalogRollupsWorkflow', {
      workflowId: `catalog-rollups:loop-test:${Date.now()}`,
      taskQueue: s.services.config.temporal.taskQueue,
      args: [{ loop: { forMs: 2_900, everyMs: 1_000 } }],
    });
    expect((result as { passes: number }).passes).toBeGreaterThanOrEqual(2);
    expect((result as { passes: number }).passes).toBeLessThanOrEqual(3);
  });

  it('reflects paid, failed and free calls in stats, boards, ranks and the overview within 60 s', async () => {
    for (let i = 0; i < 25; i++) await call(paid, '/forecast', 200);
    for (let i = 0; i < 5; i++) await call(paid, '/fail', 502);
    for (let i = 0; i < 3; i++) await call(free, '/ping', 200);
    const lastCall = Date.now();
    await s.temporal.client.schedule.getHandle(SCHEDULES.catalogRollups.id).trigger();

    let board = await get('/v1/leaderboards/top_grossing');
    while (board.body?.data?.[0]?.slug !== paid.slug && Date.now() - lastCall < 60_000) {
      await new Promise((r) => setTimeout(r, 500));
      board = await get('/v1/leaderboards/top_grossing');
    }
    expect(Date.now() - lastCall, show(board)).toBeLessThan(60_000);
    expect(board.status, show(board)).toBe(200);
    expect(board.body.meta).toMatchObject({ board: 'top_grossing', metric: 'gmv_cents_30d' });
    expect(board.body.data, show(board)).toEqual([
      {
        rank: 1,
        slug: paid.slug,
        name: 'Skyline Forecast',
        summary: 'Hourly forecasts',
        category: { slug: 'weather', name: 'Weather' },
        provider: { slug: 'skyline', name: 'Skyline Data' },
        metric: { name: 'gmv_cents_30d', value: 50 },
      },
    ]);
    // A run may have started before the last call landed: let the next runs settle, then check exact values.
    await s.services.temporal.runRollupsNow();

    expect(await stats(paid.apiId)).toMatchObject({
      calls: '30',
      successes: '25',
      gmv_cents: '50',
      unique_consumers: 1,
      errors: { '4xx': 0, '5xx': 5, timeout: 0 },
      p50_ms: expect.any(Number),
      p95_ms: expect.any(Number),
    });
    expect(await stats(free.apiId, '30d')).toMatchObject({ calls: '3', successes: '3', gmv_cents: '0' });

    const used = await get('/v1/leaderboards/most_used');
    expect(used.body.data.map((i: { slug: string; metric: { value: number } }) => [i.slug, i.metric.value])).toEqual([
      [paid.slug, 25],
      [free.slug, 3],
    ]);
    // 30 judged calls (25 ok, 5 upstream 5xx) pass the 20-call minimum; the free listing (3 calls) does not.
    const reliable = await get('/v1/leaderboards/most_reliable');
    expect(reliable.body.data, show(reliable)).toHaveLength(1);
    expect(reliable.body.data[0].metric.value).toBeCloseTo(wilsonLowerBound(25, 30), 3);
    const inCategory = await get('/v1/leaderboards/top_grossing?category=weather&limit=5');
    expect(
      inCategory.body.data.map((i: { slug: string }) => i.slug),
      show(inCategory),
    ).toEqual([paid.slug]);
    const otherCategory = await get('/v1/leaderboards/most_used?category=animals');
    expect(otherCategory.body.data).toEqual([]);

    const ranks = await sql<{ board: string; scope: string; rank: number }>(
      s.db.url,
      `select board, scope, rank from api_ranks where api_id = $1 order by board, scope`,
      [paid.apiId],
    );
    expect(ranks).toEqual(
      expect.arrayContaining([
        { board: 'top_grossing', scope: 'overall', rank: 1 },
        { board: 'top_grossing', scope: 'category:weather', rank: 1 },
        { board: 'most_used', scope: 'overall', rank: 1 },
        { board: 'most_reliable', scope: 'overall', rank: 1 },
        { board: 'trending', scope: 'overall', rank: 1 },
        { board: 'new_rising', scope: 'overall', rank: 1 },
      ]),
    );

    const overview = await get('/v1/market/overview');
    expect(overview.status, show(overview)).toBe(200);
    expect(overview.body.data).toMatchObject({
      live_apis: 2,
      providers: 1,
      categories: 1,
      calls_24h: 33,
      calls_7d: 33,
      gmv_cents_24h: 50,
      gmv_cents_7d: 50,
      active_consumers_24h: 1,
      active_consumers_7d: 1,
      median_price_cents: 2,
    });

    const [score] = await sql<{ svc_score: number; reliability: number; usage: number }>(
      s.db.url,
      `select svc_score, reliability, usage from api_scores where api_id = $1`,
      [paid.apiId],
    );
    expect(score!.svc_score).toBeGreaterThan(0);
    expect(score!.svc_score).toBeLessThanOrEqual(100);
    expect(score!.usage).toBe(1); // the market's most used listing
  });

  it('is idempotent and incremental from its watermark, and records its history for replay', async () => {
    const before = await stats(paid.apiId, '30d');
    await s.services.temporal.runRollupsNow('catalog-rollups:test-rerun');
    expect(await stats(paid.apiId, '30d')).toEqual(before);
    await recordHistory(s.temporal.address, 'catalog-rollups:test-rerun', 'catalog-rollups-run.json');

    for (let i = 0; i < 3; i++) await call(paid, '/forecast', 200);
    const next = await s.services.temporal.runRollupsNow();
    expect(next.usage.listings_touched).toBeGreaterThanOrEqual(1);
    expect(await stats(paid.apiId, '30d')).toMatchObject({ calls: '33', successes: '28', gmv_cents: '56' });
  });

  it('adds one score history point per listing per day', async () => {
    const points = () =>
      sql<{ day: string }>(
        s.db.url,
        `select to_char(day, 'YYYY-MM-DD') as day from api_score_history where api_id = $1 order by day`,
        [paid.apiId],
      );
    const today = clock.now().toISOString().slice(0, 10);
    expect((await points()).map((p) => p.day)).toEqual([today]);
    clock.offsetMs += DAY;
    try {
      const run = await s.services.temporal.runRollupsNow();
      expect(run.usage.full_refresh).toBe(true);
      await s.services.temporal.runRollupsNow();
      const tomorrow = clock.now().toISOString().slice(0, 10);
      expect((await points()).map((p) => p.day)).toEqual([today, tomorrow]);
      // A day later the calls are still in the 7- and 30-day windows, but not in the last 24 hours.
      expect(await stats(paid.apiId, '24h')).toMatchObject({ calls: '0' });
      expect(await stats(paid.apiId, '7d')).toMatchObject({ calls: '33' });
    } finally {
      clock.offsetMs -= DAY;
      await s.services.temporal.runRollupsNow();
    }
  });

  it('puts price changes and publishes on the authenticated activity feed, with nothing private', async () => {
    await sql(s.db.url, `update endpoints set price_cents = 3 where id = $1`, [paid.endpoints['GET /forecast']]);
    await s.services.temporal.runRollupsNow();
    expectFailure(await get('/v1/market/activity'), 401, 'unauthenticated');
    const feed = await get('/v1/market/activity?limit=20', consumer.apiKey);
    expect(feed.status, show(feed)).toBe(200);
    expect(feed.body.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: 'price_change',
          api: { slug: paid.slug, name: 'Skyline Forecast' },
          provider: { slug: 'skyline', name: 'Skyline Data' },
          method: 'GET',
          path: '/forecast',
          from_price_cents: 2,
          to_price_cents: 3,
        }),
        expect.objectContaining({ kind: 'publish', api: { slug: paid.slug, name: 'Skyline Forecast' } }),
        expect.objectContaining({ kind: 'new_provider', provider: { slug: 'skyline', name: 'Skyline Data' } }),
      ]),
    );
    expect(feed.text).not.toContain(provider.orgId);
    expect(feed.text).not.toContain(consumer.orgId);
    // The same change is reported once, however many runs see it.
    await s.services.temporal.runRollupsNow();
    const again = await get('/v1/market/activity', consumer.apiKey);
    expect(again.body.data.filter((i: { kind: string }) => i.kind === 'price_change')).toHaveLength(1);

    // The free listing overtakes the paid one on most_used (33 successful calls against 28): a mover.
    for (let i = 0; i < 30; i++) await call(free, '/ping', 200);
    await s.services.temporal.runRollupsNow();
    const moved = await get('/v1/market/activity', consumer.apiKey);
    expect(moved.body.data, show(moved)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: 'mover',
          api: { slug: free.slug, name: free.slug },
          board: 'most_used',
          from_rank: 2,
          to_rank: 1,
        }),
      ]),
    );
    const used = await get('/v1/leaderboards/most_used');
    expect(used.body.data.map((i: { slug: string }) => i.slug)).toEqual([free.slug, paid.slug]);
    expectFailure(await get('/v1/market/activity?limit=0', consumer.apiKey), 400, 'validation_failed');
    expectFailure(await get('/v1/market/activity?limit=201', consumer.apiKey), 400, 'validation_failed');
  });

  it('answers 400 in the envelope for an unknown board, a bad limit or an unknown category', async () => {
    const unknown = await get('/v1/leaderboards/hottest');
    expectFailure(unknown, 400, 'validation_failed');
    expect(unknown.body.error.details.boards).toEqual([
      'top_grossing',
      'most_used',
      'most_reliable',
      'best_value',
      'trending',
      'new_rising',
    ]);
    for (const q of ['limit=0', 'limit=501', 'limit=abc', 'limit=2.5', 'category=', 'category=no-such-thing', 'x=1']) {
      expectFailure(await get(`/v1/leaderboards/most_used?${q}`), 400, 'validation_failed');
    }
    const ok = await get('/v1/leaderboards/best_value?limit=500');
    expect(ok.status, show(ok)).toBe(200);
    expect(ok.body.meta.metric).toBe('reliability_per_cent');
  });
});
