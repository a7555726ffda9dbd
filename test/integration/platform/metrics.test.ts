// The operators' metrics with real processes (control plane, gateway, worker, agent-tool server; scripts/start.ts, one role each, each
// with METRICS_PORT): after traffic (a paid call, a refused one, an API request, a publish workflow) each process's
// /metrics shows the series docs/operations.md lists, with the labels an alert would use.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Person } from '../../helpers/accounts.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { http } from '../../helpers/http.js';
import { freePort } from '../../helpers/ports.js';
import { sharedRoleEnv, startProcess, type RunningProcess } from '../../helpers/processes.js';
import { seedPaidListing } from '../../helpers/seed.js';
import { startTemporal } from '../../helpers/temporal.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

const scrape = async (port: number) => {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return res.text();
};

/** The value of one series (exact label set, in the order prom-client prints them), or undefined. */
function valueOf(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics on every process', () => {
  let db: TestDatabase;
  let temporal: Awaited<ReturnType<typeof startTemporal>>;
  let upstream: Upstream;
  const procs: RunningProcess[] = [];
  const ports = { api: 0, gateway: 0, worker: 0, mcp: 0 };
  let api: RunningProcess;
  let gateway: RunningProcess;
  let mcp: RunningProcess;
  let provider: Person;
  let consumerKey: string;
  let poorKey: string;
  let slug: string;

  beforeAll(async () => {
    [db, temporal, upstream] = await Promise.all([createTestDatabase(), startTemporal(), startUpstream()]);
    const seeded = await seedPaidListing(db.url, {
      baseUrl: upstream.url,
      priceCents: 3,
      credit: 1_000,
      keys: { poor: 1 },
    });
    ({ provider, slug } = seeded);
    consumerKey = seeded.consumer.apiKey;
    poorKey = seeded.keys.poor!;
    const common = sharedRoleEnv(db.url, temporal.address);
    for (const role of ['api', 'gateway', 'worker', 'mcp'] as const) ports[role] = await freePort();
    const withMetrics = (role: 'api' | 'gateway' | 'worker' | 'mcp') =>
      startProcess({ roles: [role], env: { ...common, METRICS_PORT: String(ports[role]) } });
    [api, gateway] = await Promise.all([withMetrics('api'), withMetrics('gateway')]);
    procs.push(api, gateway);
    procs.push(await withMetrics('worker'));
    mcp = await withMetrics('mcp');
    procs.push(mcp);
  }, 240_000);

  afterAll(async () => {
    for (const p of procs) await p.stop().catch(() => undefined);
    await upstream?.close();
    await temporal?.env.teardown().catch(() => undefined);
    await db?.drop();
  }, 60_000);

  it('the gateway: requests by route and status, admissions, upstream by API, the drain, reservations', async () => {
    const paid = await http(gateway.urls.gateway, 'GET', `/v1/proxy/${slug}/paid`, { token: consumerKey });
    expect(paid.status).toBe(200);
    const refused = await http(gateway.urls.gateway, 'GET', `/v1/proxy/${slug}/paid`, { token: poorKey });
    expect(refused.status).toBe(402);
    await expect
      .poll(async () => valueOf(await scrape(ports.gateway), 'usage_drain_booked_total{outcome="success"}'), {
        timeout: 10_000,
      })
      .toBe(1);
    const text = await scrape(ports.gateway);
    const route = 'surface="gateway",route="/v1/proxy/:slug/*",method="GET"';
    expect(valueOf(text, `http_requests_total{${route},status="200"}`)).toBe(1);
    expect(valueOf(text, `http_requests_total{${route},status="402"}`)).toBe(1);
    expect(valueOf(text, `http_request_duration_seconds_count{${route},status="200"}`)).toBe(1);
    expect(valueOf(text, 'gateway_admissions_total{outcome="admitted"}')).toBe(1);
    expect(valueOf(text, 'gateway_admissions_total{outcome="insufficient_budget"}')).toBe(1);
    expect(valueOf(text, `gateway_upstream_duration_seconds_count{api="${slug}",outcome="ok"}`)).toBe(1);
    expect(valueOf(text, 'usage_drain_lag_seconds_count')).toBe(1);
    expect(valueOf(text, 'usage_drain_pending')).toBe(0);
    expect(valueOf(text, 'gateway_reservations_open')).toBe(0);
    expect(valueOf(text, 'gateway_reservation_oldest_age_seconds')).toBe(0);
    expect(valueOf(text, 'nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
    expect(valueOf(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);

    const wrong = await fetch(`http://127.0.0.1:${ports.gateway}/other`);
    expect(wrong.status).toBe(404);
  });

  it('the control plane: requests by route template (not by id) and ledger drift', async () => {
    const keys = await http(api.urls.api, 'GET', '/v1/keys', { token: consumerKey });
    expect(keys.status).toBe(200);
    const missing = await http(api.urls.api, 'PATCH', `/v1/keys/key_${randomBytes(8).toString('hex')}`, {
      token: consumerKey,
      body: { name: 'x' },
    });
    expect(missing.status).toBeGreaterThanOrEqual(400);
    const text = await scrape(ports.api);
    expect(valueOf(text, 'http_requests_total{surface="api",route="/v1/keys",method="GET",status="200"}')).toBe(1);
    expect(text).toMatch(
      /http_requests_total\{surface="api",route="\/v1\/keys\/:id",method="PATCH",status="4\d\d"\} 1/,
    );
    expect(text).not.toMatch(/route="\/v1\/keys\/key_/);
    expect(valueOf(text, 'ledger_drift_orgs')).toBe(0);
  });

  it('the agent-tool server: its requests by route and status', async () => {
    // Without a bearer the MCP endpoint answers 401 (with its OAuth discovery header).
    const res = await fetch(`${mcp.urls.mcp}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    const text = await scrape(ports.mcp);
    expect(text).toMatch(/http_requests_total\{surface="mcp",route="[^"]+",method="POST",status="401"\} 1/);
    expect(valueOf(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('the worker: activity outcomes and the Temporal SDK series after a publish workflow', async () => {
    const draft = await http(api.urls.api, 'POST', '/v1/provider/apis', {
      token: provider.session,
      body: {
        name: 'Metrics probe',
        slug: `metrics-${randomBytes(3).toString('hex')}`,
        summary: 'Published to see workflow metrics',
        base_url: upstream.url,
        endpoints: [{ method: 'GET', path: '/paid', price_cents: 1 }],
      },
    });
    expect(draft.status, draft.text).toBe(201);
    const published = await http(api.urls.api, 'POST', `/v1/provider/apis/${draft.body.data.api_id}/publish`, {
      token: provider.session,
      body: { accept_terms: true },
    });
    expect(published.status, published.text).toBe(200);
    await expect
      .poll(
        async () =>
          /temporal_activity_outcomes_total\{activity="\w+",outcome="completed"\} \d/.test(await scrape(ports.worker)),
        {
          timeout: 15_000,
        },
      )
      .toBe(true);
    const text = await scrape(ports.worker);
    expect(text).toMatch(/^temporal_workflow_completed(_total)?\{/m);
    expect(valueOf(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });
});
