// Issue 31, section 4: a live listing on a loopback upstream, made while UPSTREAM_ALLOW_PRIVATE was on, after a
// restart with the setting off (a second service stack on the same database). The marketplace's address policy, not
// the provider's server, is why calls cannot be made: consumers get 503 upstream_not_allowed (over HTTP and through
// the agent tools), never 502 connect_failed, nothing is charged and the upstream sees nothing; the provider's
// analytics and the API's console page say what is wrong and how to fix it. The books still balance.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import type { Person } from '../../helpers/accounts.js';
import { expectReconciled } from '../../helpers/books.js';
import { closeAll, createConsumer, createPaidApi } from '../../helpers/fixtures.js';
import { sql } from '../../helpers/db.js';
import { expectFailure, http, serve } from '../../helpers/http.js';
import type { LiveApi } from '../../helpers/listings.js';
import { createMcpApp, type McpSurface } from '../../../mcp/app.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

const POLICY = /not reachable under this marketplace's address policy/;

describe('a live loopback listing after a restart with UPSTREAM_ALLOW_PRIVATE off', () => {
  let upstream: Upstream;
  let before: TestStack;
  let after: TestStack;
  let gatewayBefore: GatewayHandler;
  let gatewayAfter: GatewayHandler;
  let gwBefore: RunningHttpServer;
  let gwAfter: RunningHttpServer;
  let apiBefore: RunningHttpServer;
  let apiAfter: RunningHttpServer;
  let mcpAfter: McpSurface;
  let mcpServer: RunningHttpServer;
  let client: Client | undefined;
  let api: LiveApi & { provider: Person };
  let consumer: Person;

  beforeAll(async () => {
    upstream = await startUpstream();
    before = await createTestStack({ env: { UPSTREAM_ALLOW_PRIVATE: 'true' } });
    api = await createPaidApi(before.services, {
      baseUrl: `${upstream.url}/v1`,
      endpoints: [
        { method: 'GET', path: '/free', priceCents: 0 },
        { method: 'GET', path: '/paid', priceCents: 3 },
      ],
    });
    consumer = await createConsumer(before.services, 50);
    gatewayBefore = createGatewayHandler(before.services);
    gwBefore = await serve(gatewayBefore);
    apiBefore = await serve(createApiApp(before.services).callback());
    // The "restart": the same database, the setting off.
    after = await createTestStack({ db: before.db, env: { UPSTREAM_ALLOW_PRIVATE: 'false' } });
    gatewayAfter = createGatewayHandler(after.services);
    gwAfter = await serve(gatewayAfter);
    apiAfter = await serve(createApiApp(after.services).callback());
    // The agent-tool server calls the gateway in process: this stack's.
    mcpAfter = createMcpApp(after.services, { gateway: gatewayAfter });
    mcpServer = await serve(mcpAfter.app.callback());
  });

  afterAll(async () => {
    await gatewayAfter?.drain.flush();
    await gatewayBefore?.drain.flush();
    await expectReconciled(after?.services);
    await client?.close();
    await closeAll(mcpAfter, mcpServer, gwAfter, gatewayAfter, apiAfter, after);
    await closeAll(apiBefore, gwBefore, gatewayBefore, before, upstream);
  });

  const balance = async () =>
    Number(
      (
        await sql<{ c: string }>(before.db.url, 'select credit_cents as c from orgs where id = $1', [consumer.orgId])
      )[0]!.c,
    );

  it('before the restart (setting on) the listing answers, and a paid call is charged', async () => {
    const res = await http(gwBefore.url, 'GET', `/v1/proxy/${api.slug}/paid`, { token: consumer.apiKey });
    expect(res.status, res.text).toBe(200);
    await gatewayBefore.drain.flush();
    expect(await balance()).toBe(47);
  });

  it('after it, paid and free calls get 503 upstream_not_allowed: no upstream call, nothing charged', async () => {
    const seen = upstream.seen.length;
    for (const path of ['/paid', '/free']) {
      const res = await http(gwAfter.url, 'GET', `/v1/proxy/${api.slug}${path}`, { token: consumer.apiKey });
      expectFailure(res, 503, 'upstream_not_allowed');
      expect(res.body.error.message).toMatch(POLICY);
      expect(res.body.error.details).toEqual({ reason: 'upstream_not_allowed' });
      expect(res.text).not.toMatch(/connect_failed|127\.0\.0\.1|loopback/);
    }
    expect(upstream.seen.length).toBe(seen);
    await gatewayAfter.drain.flush();
    expect(await balance()).toBe(47);
  });

  it('through the agent tools too: call_api answers upstream_not_allowed with status 503', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${mcpServer.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${consumer.apiKey}` } },
    });
    client = new Client({ name: 'upstream-not-allowed-test', version: '1.0.0' });
    await client.connect(transport);
    await client.listTools();
    const result = (await client.callTool({
      name: 'call_api',
      arguments: { slug: api.slug, endpoint: '/paid' },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    const error = (result.structuredContent as { error: { code: string; message: string; details: object } }).error;
    expect(error.code).toBe('upstream_not_allowed');
    expect(error.message).toMatch(POLICY);
    expect(error.details).toMatchObject({ reason: 'upstream_not_allowed', status: 503 });
  });

  it("the provider's analytics name the problem and the fix; the policy that allows it shows none", async () => {
    const res = await http(apiAfter.url, 'GET', '/v1/provider/analytics', { token: api.provider.session });
    expect(res.status, res.text).toBe(200);
    const row = res.body.data.by_api.find((r: { slug: string }) => r.slug === api.slug);
    expect(row.upstream_problem).toEqual({
      code: 'upstream_not_allowed',
      message: expect.stringContaining(`(${new URL(upstream.url).host}) under this marketplace's address policy`),
      hint: expect.stringContaining('UPSTREAM_ALLOW_PRIVATE=true'),
    });
    expect(row.upstream_problem.hint).toContain('base URL');
    const allowed = await http(apiBefore.url, 'GET', '/v1/provider/analytics', { token: api.provider.session });
    expect(allowed.body.data.by_api.find((r: { slug: string }) => r.slug === api.slug).upstream_problem).toBeNull();
  });

  it("the API's console page shows the problem as a banner", async () => {
    const page = await fetch(`${apiAfter.url}/console/provider/apis/${api.apiId}`, {
      headers: { cookie: `svc_session=${api.provider.session}` },
    });
    const html = await page.text();
    expect(page.status, html).toBe(200);
    expect(html).toMatch(
      /<div class="banner bad" role="alert"><strong>The gateway cannot reach this API&#39;s upstream/,
    );
    expect(html).toContain('UPSTREAM_ALLOW_PRIVATE=true');
  });
});
