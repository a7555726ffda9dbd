// Public reads are cheap (issue 10): with 10k usage events over 200 listings, every query that
// GET /v1/providers/{slug} and GET /v1/provider/analytics run is planned without a sequential scan of usage_events,
// and the provider profile's stats are served from a short in-process cache.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { ManualClock } from '../../../core/clock.js';
import { newId } from '../../../core/ids.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { PROVIDER_STATS_TTL_MS } from '../../../core/providers/provider-directory.service.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { http, serve, describe as show } from '../../helpers/http.js';
import { createLiveApi } from '../../helpers/listings.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

describe('public read costs', () => {
  const clock = new ManualClock();
  let stack: TestStack;
  let server: RunningHttpServer;
  let provider: Person;
  let consumer: Person;
  let providerApis: string[];
  const captured: string[] = [];

  beforeAll(async () => {
    stack = await createTestStack({ clock });
    server = await serve(createApiApp(stack.services).callback());
    // MikroORM inlines the parameters, so each statement the routes run arrives here complete.
    stack.services.orm.em
      .getConnection()
      .getKnex()
      .on('query', (q: { sql: string }) => captured.push(q.sql));
    provider = await createPerson(stack.services);
    consumer = await createPerson(stack.services);
    const profile = await http(server.url, 'PATCH', '/v1/me/profile', {
      token: provider.session,
      body: { display_name: 'Plan Co', slug: 'plan-co' },
    });
    expect(profile.status, show(profile)).toBe(200);
    providerApis = [];
    for (let i = 0; i < 2; i++) {
      const api = await createLiveApi(stack.services, {
        providerOrgId: provider.orgId,
        baseUrl: 'http://127.0.0.1:9',
        endpoints: [{ method: 'GET', path: '/x', priceCents: 1 }],
      });
      providerApis.push(api.apiId);
    }
    // 198 more listings of 20 other providers, and 10k calls spread over all 200 listings: call g is on listing
    // g % 200, k = g / 200 days (and half a day, so moving the clock by minutes never moves a row across the 30-day
    // edge) before now, and failed when k % 4 = 0. So each listing has 30 calls in the last 30 days, 8 of them failed:
    // this provider's two make 60 calls, 44 successful.
    await sql(
      stack.db.url,
      `insert into orgs (id, kind) select 'org_seed_' || g, 'standard' from generate_series(1, 20) g`,
    );
    await sql(
      stack.db.url,
      `insert into apis (id, org_id, name, slug, summary, base_url, status)
       select 'api_seed_' || g, 'org_seed_' || (g % 20 + 1), 'seed ' || g, 'seed-' || g, 's', 'http://127.0.0.1:9', 'live'
         from generate_series(1, 198) g`,
    );
    const ids = (await sql<{ ids: string[] }>(stack.db.url, 'select array_agg(id order by id) as ids from apis'))[0]!
      .ids;
    expect(ids).toHaveLength(200);
    await sql(
      stack.db.url,
      `insert into usage_events (id, org_id, key_id, api_slug, api_id, method, path, status, outcome, cost_cents,
                                 latency_ms, request_id, created_at)
       select 'usage_seed_' || g, $1, $2, 'seed', ($3::text[])[1 + g % 200], 'GET', '/x', 200,
              case when (g / 200) % 4 = 0 then 'failed' else 'success' end, case when (g / 200) % 4 = 0 then 0 else 1 end,
              5, 'req_seed_' || g, $4::timestamptz - (g / 200) * interval '1 day' - interval '12 hours'
         from generate_series(0, 9999) g`,
      [consumer.orgId, consumer.keyId, ids, clock.now()],
    );
    await sql(stack.db.url, 'analyze');
  });
  afterAll(async () => {
    await server?.close();
    await stack?.close();
  });

  /** The statements a request runs (through the ORM), in order. */
  async function statementsOf(run: () => Promise<void>): Promise<string[]> {
    captured.length = 0;
    await run();
    return captured.splice(0);
  }

  /**
   * For each read statement: the relations holding rows that its plan scans sequentially (usage_events is partitioned
   * by month: a partition counts as `usage_events`; an empty partition's scan costs nothing and is not counted), and
   * whether it reads usage_events.
   */
  async function plans(statements: string[]) {
    const reads = statements.filter((s) => /^\s*(select|with)\b/i.test(s));
    const usagePart = /^usage_events(_p\d{6}|_default)?$/;
    const filled = new Set(
      (
        await sql<{ part: string }>(stack.db.url, `select distinct tableoid::regclass::text as part from usage_events`)
      ).map((r) => r.part),
    );
    const named = (n: PlanNode) => (usagePart.test(n['Relation Name'] ?? '') ? 'usage_events' : n['Relation Name']!);
    const out: { sql: string; seqScans: string[]; readsUsage: boolean; plan: unknown }[] = [];
    for (const statement of reads) {
      const [row] = await sql<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        stack.db.url,
        `explain (format json) ${statement}`,
      );
      const nodes = nodesOf(row!['QUERY PLAN'][0].Plan);
      out.push({
        sql: statement,
        seqScans: nodes
          .filter((n) => n['Node Type'] === 'Seq Scan')
          .filter((n) => !usagePart.test(n['Relation Name'] ?? '') || filled.has(n['Relation Name']!))
          .map(named),
        readsUsage: nodes.some((n) => usagePart.test(n['Relation Name'] ?? '')),
        plan: row!['QUERY PLAN'],
      });
    }
    return out;
  }

  /** Exactly one of `statements` reads usage, and none scans usage_events sequentially. */
  async function expectOneUsageReadWithoutSeqScan(statements: string[]): Promise<void> {
    const planned = await plans(statements);
    expect(
      planned.filter((p) => p.readsUsage),
      JSON.stringify(statements),
    ).toHaveLength(1);
    for (const p of planned) expect(p.seqScans, `${p.sql}\n${JSON.stringify(p.plan)}`).not.toContain('usage_events');
  }

  it('GET /v1/providers/{slug}: no statement scans usage_events sequentially', async () => {
    const statements = await statementsOf(async () => {
      const res = await http(server.url, 'GET', '/v1/providers/plan-co');
      expect(res.status, show(res)).toBe(200);
    });
    await expectOneUsageReadWithoutSeqScan(statements);
  });

  it('GET /v1/provider/analytics: no statement scans usage_events sequentially', async () => {
    const statements = await statementsOf(async () => {
      const res = await http(server.url, 'GET', '/v1/provider/analytics', { token: provider.session });
      expect(res.status, show(res)).toBe(200);
      expect(res.body.data.by_api).toHaveLength(2);
      expect(res.body.data.totals).toMatchObject({ calls: 60, successful_calls: 44, gmv_cents: 44 });
    });
    await expectOneUsageReadWithoutSeqScan(statements);
  });

  it(`serves a provider's stats from the cache for ${PROVIDER_STATS_TTL_MS / 1000} s, then reads them again`, async () => {
    const stats = async () => {
      const res = await http(server.url, 'GET', '/v1/providers/plan-co');
      expect(res.status, show(res)).toBe(200);
      return res.body.data.stats as { live_apis: number; calls_30d: number; success_rate_30d: number };
    };
    clock.advance(PROVIDER_STATS_TTL_MS + 1); // whatever earlier tests cached has expired
    const first = await stats();
    expect(first).toEqual({ live_apis: 2, calls_30d: 60, success_rate_30d: 0.7333 });
    await sql(
      stack.db.url,
      `insert into usage_events (id, org_id, key_id, api_slug, api_id, method, path, status, outcome, cost_cents,
                                 latency_ms, request_id, created_at)
       values ($1, $2, $3, 'seed', $4, 'GET', '/x', 200, 'success', 1, 5, 'req_new', $5)`,
      [newId('usage'), consumer.orgId, consumer.keyId, providerApis[0], clock.now()],
    );
    clock.advance(PROVIDER_STATS_TTL_MS - 1_000);
    const statements = await statementsOf(async () => {
      expect(await stats()).toEqual(first); // the old value, within the TTL
    });
    expect(statements.filter((s) => s.includes('usage_events'))).toEqual([]); // and no usage query ran
    clock.advance(2_000);
    expect(await stats()).toEqual({ live_apis: 2, calls_30d: 61, success_rate_30d: 0.7377 });
  });

  it('keeps the stats fresh per provider: another provider is not served this one’s numbers', async () => {
    const other = await createPerson(stack.services);
    const res = await http(server.url, 'PATCH', '/v1/me/profile', {
      token: other.session,
      body: { display_name: 'Other', slug: 'other-co' },
    });
    expect(res.status, show(res)).toBe(200);
    const page = await http(server.url, 'GET', '/v1/providers/other-co');
    expect(page.body.data.stats, show(page)).toEqual({ live_apis: 0, calls_30d: 0, success_rate_30d: null });
  });
});
