// Both MCP revisions at one URL ({mcp_url}/mcp), driven by the SDK's v2 client (@modelcontextprotocol/client) over
// the real HTTP server: 2025-11-25 (the client's default `legacy` mode: initialize, a stored session) and 2026-07-28
// (pinned: server/discover, then stateless requests carrying `_meta`). In each era: discover, search, quote, a paid
// call_api (charged once, the books balanced), set_budget, and a 402 (nothing charged); missing scopes and bad
// arguments answer alike. Beside that, on the wire: 2026-07-28 answers carry no Mcp-Session-Id and store no session,
// tools/list is the same listing in both eras (with ttlMs/cacheScope in 2026-07-28), an OAuth token acts as its key
// with its scopes, a revoked or bad key is a 401 with WWW-Authenticate, Mcp-Method / Mcp-Name headers that disagree
// with the body are refused before any tool runs, and mcp_requests_total counts both eras by method and tool.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payloadRowId } from '../../../core/oauth/oauth-adapter.js';
import { TOOLS_LIST_TTL_MS } from '../../../mcp/server.js';
import { createPerson } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import type { LiveApi } from '../../helpers/listings.js';
import { erasOf, type Data, ERAS, LEGACY, MODERN, ok, postInitialize, refused } from '../../helpers/mcp-eras.js';
import { createCredentialedApi, serveMcp, type ServedMcp } from '../../helpers/mcp-served.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { closeAll } from '../../helpers/fixtures.js';
describe('agent-tool server: 2025-11-25 and 2026-07-28 at one endpoint', () => {
  let stack: TestStack;
  let served: ServedMcp;
  let upstream: Upstream;
  let market: LiveApi;

  beforeAll(async () => {
    upstream = await startUpstream();
    upstream.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"price":99}');
    });
    stack = await createTestStack();
    served = await serveMcp(stack.services);
    market = await createCredentialedApi(stack.services, {
      provider: await createPerson(stack.services),
      baseUrl: upstream.url,
      slug: `erasquotes-${randomBytes(3).toString('hex')}`,
      secret: 'eras-upstream-secret',
    });
    await sql(stack.db.url, `update apis set summary = 'Stock quotes in both protocol eras' where id = $1`, [
      market.apiId,
    ]);
    await stack.services.searchIndex.index([market.apiId]);
  });
  afterAll(async () => {
    await served?.close();
    // Money moved in both eras: every org's cached balance still equals its ledger sum.
    await stack?.services.earnings.foldAll();
    expect(await stack?.services.ledger.findDrift()).toEqual([]);
    await closeAll(stack, upstream);
  });

  const { connect, creditedPerson, creditOf, modernPost } = erasOf(
    () => stack,
    () => served,
    'eras-test',
  );

  const sessionsOf = async (orgId: string) =>
    Number(
      (await sql<{ n: string }>(stack.db.url, 'select count(*) as n from mcp_sessions where org_id = $1', [orgId]))[0]!
        .n,
    );

  for (const era of ERAS) {
    it(`${era}: discover, search, quote, a paid call_api, set_budget and a 402, as in the other era`, async () => {
      const person = await creditedPerson(20);
      const client = await connect(era, person.apiKey);
      expect(client.getServerVersion()?.name).toBe('svc-marketplace');
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThanOrEqual(41);

      const found = await ok(client, 'discover_tools', { query: 'stock quotes both eras' });
      expect(found.items.map((i: Data) => i.slug)).toContain(market.slug);
      const searched = await ok(client, 'search_apis', { query: 'stock quotes both eras' });
      expect(searched.items.map((i: Data) => i.slug)).toContain(market.slug);
      const quote = await ok(client, 'quote_call', { slug: market.slug, path: '/paid/ACME' });
      expect(quote).toMatchObject({ price_cents_effective: 5 });

      const before = upstream.seen.length;
      const paid = await ok(client, 'call_api', { slug: market.slug, endpoint: '/paid/ACME', idempotency_key: era });
      expect(paid).toMatchObject({ status: 200, body: { price: 99 }, billing: { cost_cents: 5 } });
      const replay = await ok(client, 'call_api', { slug: market.slug, endpoint: '/paid/ACME', idempotency_key: era });
      expect(replay.billing).toMatchObject({ replayed: true, original_request_id: paid.request_id });
      expect(upstream.seen.length).toBe(before + 1);
      expect(await creditOf(person.orgId)).toBe(15);

      const budget = await ok(client, 'set_budget', { per_call_max_cents: 4 });
      expect(budget).toMatchObject({ id: person.keyId, per_call_max_cents: 4 });
      const capped = await refused(
        client,
        'call_api',
        { slug: market.slug, endpoint: '/paid/B' },
        'per_call_limit_exceeded',
      );
      expect(capped.details).toMatchObject({ status: 402, per_call_max_cents: 4 });

      const broke = await creditedPerson(0);
      const poor = await connect(era, broke.apiKey);
      const unpaid = await refused(poor, 'call_api', { slug: market.slug, endpoint: '/paid/C' }, 'payment_required');
      expect(unpaid.details).toMatchObject({ status: 402, reason: 'insufficient_credits' });
      expect(upstream.seen.length).toBe(before + 1);
      expect(await creditOf(person.orgId)).toBe(15);
      expect(await creditOf(broke.orgId)).toBe(0);

      // 2025-11-25 opened a stored session; 2026-07-28 stored nothing.
      expect(await sessionsOf(person.orgId)).toBe(era === LEGACY ? 1 : 0);
    });
  }

  it('scopes and bad arguments: the same answers in both eras', async () => {
    const reader = await createPerson(stack.services, { scopes: ['catalog:read'] });
    const answers: Data[] = [];
    for (const era of ERAS) {
      const client = await connect(era, reader.apiKey);
      const forbidden = await refused(client, 'call_api', { slug: market.slug, endpoint: '/paid/A' }, 'forbidden');
      const checkout = await refused(client, 'create_checkout', { amount_cents: 500 }, 'forbidden');
      const bad = await client.callTool({ name: 'quote_call', arguments: { slug: market.slug, path: 7 } });
      expect(bad.isError).toBe(true);
      const badText = (bad.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');
      expect(badText).toContain('Input validation error');
      answers.push({
        call: forbidden.details.missing_scope,
        checkout: checkout.details.missing_scope,
      });
    }
    expect(answers[0]).toEqual({ call: 'proxy:call', checkout: 'billing:write' });
    expect(answers[1]).toEqual(answers[0]);
  });

  it('2026-07-28 on the wire: server/discover, no session id, tools/list equal to 2025 with cache fields', async () => {
    const person = await creditedPerson(0);
    const discover = await modernPost(person.apiKey, 'server/discover');
    expect(discover.status).toBe(200);
    expect(discover.headers.get('mcp-session-id')).toBeNull();
    const discovered = (await discover.json()) as Data;
    expect(JSON.stringify(discovered.result)).toContain(MODERN);
    expect(discovered.result).toMatchObject({
      supportedVersions: [MODERN],
      capabilities: { tools: { listChanged: false } },
      ttlMs: TOOLS_LIST_TTL_MS,
      cacheScope: 'public',
    });
    expect(discovered.result.instructions).toContain('quote_call');
    expect(JSON.stringify(discovered.result)).toContain('svc-marketplace');

    const listed = await modernPost(person.apiKey, 'tools/list');
    expect(listed.status).toBe(200);
    expect(listed.headers.get('mcp-session-id')).toBeNull();
    const modern = ((await listed.json()) as Data).result as Data;
    expect(modern).toMatchObject({ ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'public' });

    const legacyClient = await connect(LEGACY, person.apiKey);
    const legacy = await legacyClient.listTools();
    expect(modern.tools).toEqual(legacy.tools);
    // Deterministic: the same bytes every time.
    const again = ((await (await modernPost(person.apiKey, 'tools/list')).json()) as Data).result as Data;
    expect(JSON.stringify(again.tools)).toBe(JSON.stringify(modern.tools));
  });

  it('2026-07-28: Mcp-Method / Mcp-Name must match the body; no tool runs when they do not', async () => {
    const person = await creditedPerson(20);
    const before = upstream.seen.length;
    const args = { name: 'call_api', arguments: { slug: market.slug, endpoint: '/paid/X' } };
    const wrongName = await modernPost(person.apiKey, 'tools/call', args, { 'mcp-name': 'get_balance' });
    const wrongBody = (await wrongName.json()) as Data;
    expect(wrongBody.error?.code, JSON.stringify(wrongBody)).toBe(-32020);
    const wrongMethod = await modernPost(person.apiKey, 'tools/call', args, { 'mcp-method': 'tools/list' });
    expect(((await wrongMethod.json()) as Data).error?.code).toBe(-32020);
    expect(upstream.seen.length).toBe(before);
    expect(await creditOf(person.orgId)).toBe(20);

    const right = await modernPost(person.apiKey, 'tools/call', args);
    expect(right.status).toBe(200);
    const result = ((await right.json()) as Data).result as Data;
    expect(result.structuredContent).toMatchObject({ status: 200, billing: { cost_cents: 5 } });
    expect(await creditOf(person.orgId)).toBe(15);
  });

  it('mcp_requests_total counts both eras by method and tool (2026-07-28 from Mcp-Method / Mcp-Name)', async () => {
    const person = await creditedPerson(0);
    const series = async () => {
      const metric = await stack.services.metrics.registry.getSingleMetric('mcp_requests_total')!.get();
      return metric.values;
    };
    const count = async (labels: Record<string, string>) =>
      (await series())
        .filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want))
        .reduce((n, v) => n + v.value, 0);
    const before = {
      legacy: await count({ era: LEGACY, method: 'tools/call', tool: 'get_balance', status: '200' }),
      modern: await count({ era: MODERN, method: 'tools/call', tool: 'get_balance', status: '200' }),
    };
    for (const era of ERAS) await ok(await connect(era, person.apiKey), 'get_balance');
    expect(await count({ era: LEGACY, method: 'tools/call', tool: 'get_balance', status: '200' })).toBe(
      before.legacy + 1,
    );
    expect(await count({ era: MODERN, method: 'tools/call', tool: 'get_balance', status: '200' })).toBe(
      before.modern + 1,
    );
    expect(await count({ era: MODERN, method: 'server/discover' })).toBeGreaterThan(0);
    expect(await count({ era: LEGACY, method: 'initialize' })).toBeGreaterThan(0);
    // A name we do not offer is not a label of its own.
    await modernPost(person.apiKey, 'tools/call', { name: 'no_such_tool', arguments: {} });
    expect(await count({ era: MODERN, method: 'tools/call', tool: 'other' })).toBeGreaterThan(0);
    expect((await series()).some((v) => v.labels.tool === 'no_such_tool')).toBe(false);
  });

  it('2026-07-28: an OAuth access token acts as its key with its granted scopes; a revoked key is 401 at once', async () => {
    const person = await creditedPerson(10);
    const token = randomBytes(32).toString('base64url');
    await sql(
      stack.db.url,
      `insert into oauth_payloads (id, model, payload, grant_id, expires_at)
         values ($1, 'AccessToken', $2, 'grant-eras', now() + interval '1 hour'),
                ($3, 'Grant', '{}', 'grant-eras', now() + interval '1 hour')`,
      [
        payloadRowId('AccessToken', token),
        JSON.stringify({
          accountId: person.keyId,
          clientId: 'client-eras',
          grantId: 'grant-eras',
          aud: `${stack.config.urls.mcp}/mcp`,
          scope: 'catalog:read proxy:call',
        }),
        payloadRowId('Grant', 'grant-eras'),
      ],
    );
    const client = await connect(MODERN, token);
    const paid = await ok(client, 'call_api', { slug: market.slug, endpoint: '/paid/OAUTH' });
    expect(paid).toMatchObject({ status: 200, billing: { cost_cents: 5 } });
    expect(await creditOf(person.orgId)).toBe(5);
    const refusal = await refused(client, 'get_usage', {}, 'forbidden');
    expect(refusal.details).toMatchObject({ missing_scope: 'usage:read' });

    // Every 2026-07-28 request authenticates again: a key revoked after its last call answers 401 on the next.
    const keyHolder = await creditedPerson(0);
    expect((await modernPost(keyHolder.apiKey, 'tools/list')).status).toBe(200);
    const { principal } = await stack.services.keys.authenticate(keyHolder.apiKey);
    if (principal.type !== 'api_key') throw new Error('expected a key');
    await stack.services.keyAdmin.revoke(principal, principal.keyId);
    await expect
      .poll(async () => (await modernPost(keyHolder.apiKey, 'tools/list')).status, { timeout: 2_000 })
      .toBe(401);
  });

  it('a bad key is 401 with WWW-Authenticate in both eras', async () => {
    const bad = 'sk_live_' + 'x'.repeat(40);
    const modern = await modernPost(bad, 'tools/list');
    expect(modern.status).toBe(401);
    expect(modern.headers.get('www-authenticate')).toContain('resource_metadata=');
    const legacy = await postInitialize(served.server.url, bad);
    expect(legacy.status).toBe(401);
    expect(legacy.headers.get('www-authenticate')).toContain('resource_metadata=');
  });
});
