// `npm start -- --demo` (issue 31, item 7): the launcher on a test database, without UPSTREAM_ALLOW_PRIVATE, publishes
// the demo provider's sample APIs, served by the marketplace's own loopback upstream and allowed by name. A newcomer
// finds them, calls a free one with a fresh /v1/register key, quotes and calls paid ones with credits, installs one as
// agent tools; stats, boards and the provider's analytics show the seeded history; the books reconcile; a second
// start adds nothing and the APIs still answer.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, sql, type TestDatabase } from '../helpers/db.js';
import { ROOT } from '../helpers/env.js';
import { describe as show, http } from '../helpers/http.js';
import { freePort, waitFor } from '../helpers/ports.js';
import { codeMailedTo, processEnv, startProcess, type RunningProcess } from '../helpers/processes.js';
import { startTemporal } from '../helpers/temporal.js';

const run = promisify(execFile);
const SLUGS = ['demo-unit-converter', 'demo-text-stats', 'demo-world-data', 'demo-http-status'];
const READY = 'Marketplace is running';

/** What a second start must leave as it found it. */
const COUNTS = `select (select count(*) from apis) as apis, (select count(*) from endpoints) as endpoints,
  (select count(*) from documents) as documents, (select count(*) from orgs) as orgs,
  (select count(*) from users) as users, (select count(*) from api_keys) as keys,
  (select count(*) from ledger_entries where kind <> 'provider_earning' and kind <> 'platform_fee') as ledger,
  (select count(*) from usage_events) as usage, (select count(*) from usage_batches) as batches,
  (select string_agg(slug || '=' || base_url || '=' || status, ',' order by slug) from apis
    where slug like 'demo-%') as listings`;

describe('npm start -- --demo: sample APIs a newcomer can call, offline', () => {
  let db: TestDatabase;
  let temporal: { env: TestWorkflowEnvironment; address: string };
  let env: Record<string, string>;
  let ports: { api: number; gateway: number; mcp: number };
  let proc: RunningProcess;
  let key: string;
  let orgId: string;

  const start = async () => {
    const p = await startProcess({ roles: ['all', '--demo'], env, ports, readyTimeoutMs: 180_000 });
    // The servers answer /health first; the sample APIs are set up before the banner.
    await waitFor(() => Promise.resolve(p.output().includes(READY)), { timeoutMs: 120_000, what: 'the banner' });
    return p;
  };
  const api = (method: string, path: string, options: Parameters<typeof http>[3] = {}) =>
    http(proc.urls.api, method, path, options);
  const gateway = (method: string, path: string, options: Parameters<typeof http>[3] = {}) =>
    http(proc.urls.gateway, method, `/v1/proxy${path}`, { token: key, ...options });
  const admin = async (...args: string[]) => {
    try {
      const out = await run('npx', ['tsx', 'scripts/admin.ts', ...args], {
        cwd: ROOT,
        env: { ...process.env, ...env, LOG_LEVEL: 'silent' },
      });
      return { code: 0, ...out };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  beforeAll(async () => {
    [db, temporal] = await Promise.all([createTestDatabase({ empty: true }), startTemporal()]);
    // No UPSTREAM_ALLOW_PRIVATE: the demo's loopback upstream is allowed by name, nothing else on loopback is.
    env = processEnv(db.url, temporal.address);
    ports = { api: await freePort(), gateway: await freePort(), mcp: await freePort() };
    proc = await start();
    const reg = await api('POST', '/v1/register');
    expect(reg.status, show(reg)).toBe(201);
    ({ api_key: key, org_id: orgId } = reg.body.data as { api_key: string; org_id: string });
  }, 300_000);

  afterAll(async () => {
    await proc?.stop();
    await temporal?.env.teardown().catch(() => undefined);
    await db?.drop();
  }, 60_000);

  it('publishes the sample APIs of a demo provider, with prices (free ones too) and terms in force', async () => {
    expect(proc.output()).toContain('demo: sample APIs ready');
    for (const slug of SLUGS) {
      const res = await api('GET', `/v1/apis/${slug}`);
      expect(res.status, show(res)).toBe(200);
      expect(res.body.data).toMatchObject({
        status: 'live',
        callable: true,
        provider: { slug: 'sample-apis', name: 'Sample APIs (demo)' },
        verification: { status: 'passed' },
      });
      expect(res.body.data.pricing.free_endpoints).toBeGreaterThanOrEqual(1);
      // Imported from its OpenAPI description (the export is built from the imported schemas).
      const schema = await api('GET', `/v1/apis/${slug}/openapi`);
      expect(schema.status, show(schema)).toBe(200);
    }
    const paid = await api('GET', '/v1/apis/demo-text-stats');
    expect(paid.body.data.pricing).toMatchObject({ min_price_cents: 0, max_price_cents: 2 });
    const [terms] = await sql(
      db.url,
      `select d.kind, d.status, d.acceptance_mode from documents d join users u on u.org_id = d.org_id
        where u.email = 'demo-provider@example.com'`,
    );
    expect(terms).toEqual({ kind: 'terms', status: 'active', acceptance_mode: 'optional' });
    const found = await api('GET', '/v1/search?q=convert%20miles%20to%20kilometres&callable=true');
    expect(found.body.data.map((i: { slug: string }) => i.slug)).toContain('demo-unit-converter');
  });

  it('a fresh /v1/register key calls a free endpoint at once; a paid one needs credit', async () => {
    const status = await gateway('GET', '/demo-http-status/statuses/429');
    expect(status.status, show(status)).toBe(200);
    expect(status.body.data).toMatchObject({ code: 429, reason: 'Too Many Requests', retryable: true });
    expect(status.body.meta).toMatchObject({ cost_cents: 0 });
    const units = await gateway('GET', '/demo-unit-converter/units');
    expect(units.body.data.dimensions.map((d: { name: string }) => d.name)).toContain('temperature');
    const refused = await gateway('GET', '/demo-unit-converter/convert?value=5&from=km&to=mi');
    expect(refused.status, show(refused)).toBe(402);
    expect(refused.body.error.details).toMatchObject({ reason: 'insufficient_credits', left_cents: 0 });
  });

  it('with credits: the quote, then paid calls charged their price', async () => {
    const grant = await admin('grant-credits', orgId, '100', '--reason', 'demo test');
    expect(grant.code, grant.stderr).toBe(0);
    const quote = await api('GET', '/v1/apis/demo-unit-converter/quote?method=GET&path=/convert', { token: key });
    expect(quote.body.data, show(quote)).toMatchObject({ price_cents: 1, admission: { allowed: true } });
    const converted = await waitFor(
      async () => {
        const res = await gateway('GET', '/demo-unit-converter/convert?value=5&from=km&to=mi');
        return res.status === 200 && res;
      },
      { timeoutMs: 15_000, what: 'the granted credit at the gateway' },
    );
    expect(converted.body.data).toEqual({ value: 5, from: 'km', to: 'mi', dimension: 'length', result: 3.106855961 });
    expect(converted.body.meta).toMatchObject({ cost_cents: 1 });
    const text = await gateway('POST', '/demo-text-stats/analyze', {
      body: { text: 'The marketplace runs offline. The demo answers from bundled data.' },
    });
    expect(text.status, show(text)).toBe(200);
    expect(text.body.data).toMatchObject({ words: 10, sentences: 2 });
    expect(text.body.meta).toMatchObject({ cost_cents: 2 });
    const bad = await gateway('GET', '/demo-world-data/time?zone=Mars/Olympus');
    expect(bad.status).toBe(502); // the upstream's 400, relayed as the gateway's upstream error and not charged
  });

  it('installs a sample API as agent tools and calls one', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${proc.urls.mcp}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    });
    const client = new Client({ name: 'demo-e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
      await client.listTools();
      const added = (await client.callTool({
        name: 'add_api_tools',
        arguments: { slug: 'demo-world-data' },
      })) as CallToolResult;
      expect(added.isError, JSON.stringify(added.content)).toBeFalsy();
      const names = (added.structuredContent as { added: string[] }).added;
      expect(names).toHaveLength(4);
      // Named from the imported operationId (getCountry).
      const countryTool = names.find((n) => /getcountry\b|countries_code/i.test(n))!;
      expect(countryTool, names.join(', ')).toBeDefined();
      const result = (await client.callTool({
        name: countryTool,
        arguments: { path: { code: 'JP' }, query: { lang: 'fr' } },
      })) as CallToolResult;
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ status: 200, body: { code: 'JP', name: 'Japon' } });
    } finally {
      await client.close();
    }
  });

  it('stats, boards and the provider analytics show a few days of history', async () => {
    const stats = await api('GET', '/v1/apis/demo-unit-converter/stats?window=7d');
    expect(stats.status, show(stats)).toBe(200);
    expect(stats.body.data.calls).toBeGreaterThan(300);
    expect(stats.body.data.success_rate).toBeGreaterThan(0.9);
    expect(stats.body.data.success_rate).toBeLessThan(1);
    expect(stats.body.data.latency_ms.p50).toBeGreaterThan(0);
    expect(stats.body.data.unique_consumers).toBeGreaterThanOrEqual(4);
    expect(stats.body.data.gmv_cents).toBeGreaterThan(0);
    const board = await api('GET', '/v1/leaderboards/most_used');
    expect(board.body.data.map((i: { slug: string }) => i.slug)).toEqual(expect.arrayContaining(SLUGS));

    const email = 'demo-provider@example.com';
    const since = proc.output().length;
    expect((await api('POST', '/v1/auth/login/request', { body: { email } })).status).toBe(200);
    const code = await codeMailedTo(proc, email, since);
    const login = await api('POST', '/v1/auth/login/verify', { body: { email, code } });
    expect(login.status, show(login)).toBe(200);
    const analytics = await api('GET', '/v1/provider/analytics', { token: login.body.data.session_token });
    expect(analytics.status, show(analytics)).toBe(200);
    expect(analytics.body.data.totals.calls).toBeGreaterThan(1000);
    expect(analytics.body.data.totals.gmv_cents).toBeGreaterThan(0);
    expect(analytics.body.data.by_api).toHaveLength(4);
    // Allowed by name: no address-policy problem, although loopback is refused to everyone else here.
    for (const row of analytics.body.data.by_api) expect(row.upstream_problem).toBeNull();
    const loopback = await api('POST', '/v1/provider/apis', {
      token: login.body.data.session_token,
      body: { name: 'Mine', slug: 'mine-on-loopback', summary: 'x', base_url: `${proc.urls.api}/v1` },
    });
    expect(loopback.status, show(loopback)).toBe(400);
    expect(loopback.body.error.details).toMatchObject({ reason: 'blocked_address' });
  });

  it('the books reconcile after the demo seeded them', async () => {
    const res = await admin('reconcile');
    expect(res.code, `${res.stdout}\n${res.stderr}`).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ ok: true });
  });

  it('a second start adds nothing, and the sample APIs still answer', async () => {
    const [before] = await sql(db.url, COUNTS);
    await proc.stop();
    proc = await start();
    expect(proc.output()).not.toContain('demo: sample APIs ready');
    expect(proc.output()).not.toContain('demo catalog: importing');
    const [after] = await sql(db.url, COUNTS);
    expect(after).toEqual(before);
    const again = await gateway('GET', '/demo-http-status/statuses/404');
    expect(again.status, show(again)).toBe(200);
  }, 240_000);
});
