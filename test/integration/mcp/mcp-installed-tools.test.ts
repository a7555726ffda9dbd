// Catalog APIs as the agent's own tools (issue 25 item 3), through the SDK's v2 client over the real HTTP server in
// both eras (2025-11-25 sessions and 2026-07-28 stateless): add_api_tools installs a listing's endpoints as typed
// tools with their price in the description; calling one is a metered gateway call (billed once, the books balanced),
// answered 402 without credit and 428 without accepted terms; bad arguments are validation_failed and reach no
// upstream; remove_api_tools takes them away. The set is stored per key: a new session, the other era and another
// instance see it; 2025-11-25 sessions get notifications/tools/list_changed when it changes or its listing is
// repriced or unpublished; a repriced endpoint lists its new price, an unpublished listing's tools are gone.
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { announceToolsChanged } from '../../../mcp/installed-tools.js';
import { MOVES_MONEY, PRICE } from '../../../mcp/tool-listing.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { http, serve, describe as show } from '../../helpers/http.js';
import type { LiveApi } from '../../helpers/listings.js';
import { erasOf, type Data, ERAS, LEGACY, MODERN, ok, refused, textOf } from '../../helpers/mcp-eras.js';
import {
  createCredentialedApi,
  createTermsApi,
  QUOTE_ENDPOINTS,
  serveMcp,
  type ServedMcp,
} from '../../helpers/mcp-served.js';
import { closeAll } from '../../helpers/fixtures.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

const ORDER_SCHEMA = {
  type: 'object',
  properties: {
    query: { type: 'object', properties: { dry_run: { type: 'boolean' } } },
    body: {
      type: 'object',
      properties: { qty: { type: 'integer', minimum: 1 } },
      required: ['qty'],
      additionalProperties: false,
    },
  },
  required: ['body'],
};

describe('installed API tools: add_api_tools, calls, remove_api_tools, in both eras', () => {
  let stack: TestStack;
  let served: ServedMcp;
  let rest: RunningHttpServer;
  let upstream: Upstream;
  let provider: Person;
  let market: LiveApi;
  let termsApi: LiveApi;

  beforeAll(async () => {
    upstream = await startUpstream((req, res, body) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ price: 99, path: req.url, body: body || null }));
    });
    stack = await createTestStack();
    served = await serveMcp(stack.services);
    rest = await serve(createApiApp(stack.services).callback());
    provider = await createPerson(stack.services);
    const upstreamOf = { provider, baseUrl: upstream.url, secret: 'installed-upstream-secret' };
    market = await createCredentialedApi(stack.services, {
      ...upstreamOf,
      slug: `tooled-${randomBytes(3).toString('hex')}`,
      endpoints: [...QUOTE_ENDPOINTS, { method: 'POST', path: '/orders', priceCents: 2 }],
    });
    await sql(stack.db.url, `update endpoints set operation_id = 'createOrder', input_schema = $1 where id = $2`, [
      JSON.stringify(ORDER_SCHEMA),
      market.endpoints['POST /orders'],
    ]);
    termsApi = await createTermsApi(stack.services, { ...upstreamOf, restUrl: rest.url });
  });
  afterAll(async () => {
    await served?.close();
    // Money moved through installed tools in both eras: every org's cached balance still equals its ledger sum.
    await stack?.services.earnings.foldAll();
    expect(await stack?.services.ledger.findDrift()).toEqual([]);
    await closeAll(rest, stack, upstream);
  });

  const { connect, creditedPerson, creditOf, modernPost } = erasOf(
    () => stack,
    () => served,
    'installed-test',
  );

  const tool = (slug: string, op: string) => `${slug}__${op}`;
  /** A 2026-07-28 client keeps a list for its ttlMs: after add/remove/changes an agent lists again (`refresh`). */
  const list = (client: Client) => client.listTools(undefined, { cacheMode: 'refresh' });
  const installedOf = async (client: Client) => (await list(client)).tools.filter((t) => t.name.includes('__'));

  /** A name the key has no live tool of: the SDK's unknown-tool answer (an error result in 2025, an error in 2026). */
  async function unknownTool(client: Client, name: string, args: Record<string, unknown>): Promise<void> {
    const answer = await client.callTool({ name, arguments: args }).then(
      (result) => textOf(result),
      (err: Error) => err.message,
    );
    expect(answer).toContain(`Tool ${name} not found`);
  }

  /** Resolves with the next notifications/tools/list_changed the client receives. */
  /**
   * Wait until the 2025-11-25 client's GET stream (where unsolicited notifications go) is open: announce a change of
   * the key's set until one arrives.
   */
  async function listening(client: Client, keyId: string): Promise<void> {
    let told = false;
    client.setNotificationHandler('notifications/tools/list_changed', () => void (told = true));
    for (let i = 0; i < 100 && !told; i++) {
      await announceToolsChanged(stack.services, keyId);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(told, 'the GET stream opened').toBe(true);
    // Let the announcements still in flight land, so the next notification awaited is the change under test.
    await new Promise((resolve) => setTimeout(resolve, 300));
  }

  function nextListChanged(client: Client): Promise<void> {
    return new Promise((resolve) => client.setNotificationHandler('notifications/tools/list_changed', () => resolve()));
  }

  for (const era of ERAS) {
    it(`${era}: installed tools are listed typed and priced, called and billed once, refused 402 and 428`, async () => {
      const person = await creditedPerson(20);
      const client = await connect(era, person.apiKey);
      const defaults = (await client.listTools()).tools.length;

      const added = await ok(client, 'add_api_tools', { slug: market.slug });
      const paidName = tool(market.slug, 'get_paid_symbol');
      const orderName = tool(market.slug, 'createOrder');
      expect(added.added).toEqual([tool(market.slug, 'get_quotes_symbol'), paidName, orderName]);
      expect(added).toMatchObject({ api: market.slug, tools_list_changed: true });
      expect(await ok(client, 'add_api_tools', { slug: market.slug })).toMatchObject({ added: [] });

      const { tools } = await list(client);
      expect(tools.length).toBe(defaults + 3);
      const paid = tools.find((t) => t.name === paidName)!;
      expect(paid.description).toContain('MOVES MONEY: 5 cents per successful call');
      expect(paid.description).toContain("Your key's caps do not limit it");
      expect(paid._meta).toMatchObject({ [MOVES_MONEY]: true, [PRICE]: '5 cents per successful call' });
      expect(paid.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, openWorldHint: true });
      // Flat arguments (issue 31): the path parameter, the query parameters and the body's fields at the top level.
      expect(paid.inputSchema).toMatchObject({
        type: 'object',
        properties: { symbol: { type: 'string' }, idempotency_key: {} },
        required: ['symbol'],
        additionalProperties: false,
      });
      const order = tools.find((t) => t.name === orderName)!;
      expect(Object.keys(order.inputSchema.properties!)).toEqual(['dry_run', 'qty', 'idempotency_key']);
      expect(order.inputSchema.properties).toMatchObject({ qty: ORDER_SCHEMA.properties.body.properties.qty });
      expect(order.inputSchema.required).toEqual(['qty']);
      expect(tools.find((t) => t.name === tool(market.slug, 'get_quotes_symbol'))!.annotations).toMatchObject({
        readOnlyHint: true,
        idempotentHint: true,
      });

      const before = upstream.seen.length;
      const call = { symbol: 'ACME', idempotency_key: `installed-${era}` };
      const first = await ok(client, paidName, call);
      expect(first).toMatchObject({ status: 200, body: { price: 99, path: '/paid/ACME' }, billing: { cost_cents: 5 } });
      // The grouped form of before is still accepted: the same request, so the same key replays it.
      const replay = await ok(client, paidName, { path: { symbol: 'ACME' }, idempotency_key: `installed-${era}` });
      expect(replay.billing).toMatchObject({ replayed: true, original_request_id: first.request_id });
      const ordered = await ok(client, orderName, { body: { qty: 2 }, query: { dry_run: true } });
      expect(ordered).toMatchObject({ status: 200, billing: { cost_cents: 2 } });
      expect(ordered.body).toMatchObject({ path: '/orders?dry_run=true', body: '{"qty":2}' });
      expect(upstream.seen.length).toBe(before + 2);
      expect(await creditOf(person.orgId)).toBe(13);

      // Bad arguments: validation_failed, nothing sent upstream, nothing charged.
      const missing = await refused(client, paidName, { path: {} }, 'validation_failed');
      expect(JSON.stringify(missing.details.issues)).toContain('symbol');
      const flatMissing = await refused(client, paidName, {}, 'validation_failed');
      expect(flatMissing.message).toContain("must have required property 'symbol'");
      await refused(client, orderName, { body: { qty: 0 } }, 'validation_failed');
      await refused(client, orderName, { qty: 0 }, 'validation_failed');
      await refused(client, orderName, { body: { qty: 1 }, extra: 1 }, 'validation_failed');
      expect(upstream.seen.length).toBe(before + 2);
      expect(await creditOf(person.orgId)).toBe(13);

      // 402 without credit, 428 without accepted terms: the gateway's refusals, with the person's next step.
      const broke = await creditedPerson(0);
      const poor = await connect(era, broke.apiKey);
      await ok(poor, 'add_api_tools', { slug: market.slug, endpoints: ['GET /paid/{symbol}'] });
      expect((await installedOf(poor)).map((t) => t.name)).toEqual([paidName]);
      const unpaid = await refused(poor, paidName, { symbol: 'C' }, 'payment_required');
      expect(unpaid.details).toMatchObject({ status: 402, reason: 'insufficient_credits' });
      await ok(poor, 'add_api_tools', { slug: termsApi.slug });
      const terms = await refused(poor, tool(termsApi.slug, 'get_free'), {}, 'terms_acceptance_required');
      expect(terms.details).toMatchObject({ status: 428, approval_url: expect.stringContaining(termsApi.slug) });
      expect(upstream.seen.length).toBe(before + 2);
      expect(await creditOf(broke.orgId)).toBe(0);

      const removed = await ok(client, 'remove_api_tools', { slug: market.slug, endpoints: [orderName] });
      expect(removed).toMatchObject({ removed: [orderName], tools_list_changed: true });
      expect((await installedOf(client)).map((t) => t.name)).not.toContain(orderName);
      await unknownTool(client, orderName, { qty: 1 });
      await ok(client, 'remove_api_tools', { slug: market.slug });
      expect(await installedOf(client)).toEqual([]);
      expect(upstream.seen.length).toBe(before + 2);
    });
  }

  it('stored per key: another session, the other era and another instance see it; 2025 sessions are told', async () => {
    const person = await creditedPerson(10);
    const legacy = await connect(LEGACY, person.apiKey);
    await listening(legacy, person.keyId);
    const changed = nextListChanged(legacy);
    const modern = await connect(MODERN, person.apiKey);
    await ok(modern, 'add_api_tools', { slug: market.slug, endpoints: [market.endpoints['GET /paid/{symbol}']!] });
    await changed;
    const names = [tool(market.slug, 'get_paid_symbol')];
    expect((await installedOf(legacy)).map((t) => t.name)).toEqual(names);

    // Another instance: its own process state, the same database and Redis (pub/sub reaches it).
    const otherStack = await createTestStack({
      db: stack.db,
      env: { REDIS_KEY_PREFIX: stack.config.counters.keyPrefix },
    });
    const other = await serveMcp(otherStack.services);
    try {
      const elsewhere = await connect(LEGACY, person.apiKey, other.server.url);
      expect((await installedOf(elsewhere)).map((t) => t.name)).toEqual(names);
      expect(await ok(elsewhere, names[0]!, { symbol: 'X' })).toMatchObject({ billing: { cost_cents: 5 } });
      // A change made on this instance reaches the session held on the other one.
      await listening(elsewhere, person.keyId);
      const told = nextListChanged(elsewhere);
      await ok(modern, 'remove_api_tools', { slug: market.slug });
      await told;
      expect(await installedOf(elsewhere)).toEqual([]);
    } finally {
      await other.close();
      await otherStack.close();
    }
    expect(await creditOf(person.orgId)).toBe(5);

    // Another key of the same org does not see them.
    const sibling = await http(rest.url, 'POST', '/v1/keys', {
      token: person.session,
      body: { name: 'sibling', scopes: ['catalog:read', 'proxy:call'] },
    });
    expect(sibling.status, show(sibling)).toBe(201);
    expect(await installedOf(await connect(MODERN, sibling.body.data.api_key))).toEqual([]);
  });

  it('2026-07-28: a list with installed tools is private with ttlMs 0; the default list stays public', async () => {
    const person = await creditedPerson(0);
    const list = async () => ((await (await modernPost(person.apiKey, 'tools/list')).json()) as Data).result as Data;
    expect(await list()).toMatchObject({ cacheScope: 'public' });
    await ok(await connect(MODERN, person.apiKey), 'add_api_tools', { slug: termsApi.slug });
    const privateList = await list();
    expect(privateList).toMatchObject({ cacheScope: 'private', ttlMs: 0 });
    expect(privateList.tools.map((t: Data) => t.name)).toContain(tool(termsApi.slug, 'get_free'));
  });

  it('a repriced endpoint lists and bills its new price; an unpublished listing takes its tools away; both notify', async () => {
    const listing = await createCredentialedApi(stack.services, {
      provider,
      baseUrl: upstream.url,
      secret: 'installed-upstream-secret',
      endpoints: [{ method: 'GET', path: '/rates', priceCents: 4 }],
    });
    const person = await creditedPerson(10);
    const client = await connect(LEGACY, person.apiKey);
    await ok(client, 'add_api_tools', { slug: listing.slug });
    const name = tool(listing.slug, 'get_rates');
    expect((await installedOf(client))[0]!.description).toContain('4 cents');

    await listening(client, person.keyId);
    let changed = nextListChanged(client);
    const repriced = await http(rest.url, 'PATCH', `/v1/provider/apis/${listing.apiId}/pricing`, {
      token: provider.session,
      body: { endpoints: [{ endpoint_id: listing.endpoints['GET /rates'], price_cents: 3 }] },
    });
    expect(repriced.status, show(repriced)).toBe(200);
    await changed;
    const [listed] = await installedOf(client);
    expect(listed!.description).toContain('MOVES MONEY: 3 cents per successful call (was 4 cents');
    expect(listed!._meta).toMatchObject({ [PRICE]: '3 cents per successful call' });
    expect(await ok(client, name)).toMatchObject({ billing: { cost_cents: 3 } });
    expect(await creditOf(person.orgId)).toBe(7);

    changed = nextListChanged(client);
    await stack.services.providerLifecycle.setStatus(listing.apiId, 'draft'); // what the unpublish workflow runs
    await changed;
    expect(await installedOf(client)).toEqual([]);
    await unknownTool(client, name, {});
    expect(await creditOf(person.orgId)).toBe(7);
    // Still stored: published again, the tool is back.
    await stack.services.providerLifecycle.setStatus(listing.apiId, 'live');
    expect((await installedOf(client)).map((t) => t.name)).toEqual([name]);
  });

  it('add_api_tools and remove_api_tools need proxy:call; an unknown endpoint or listing is refused', async () => {
    const reader = await creditedPerson(0, ['catalog:read']);
    for (const era of ERAS) {
      const client = await connect(era, reader.apiKey);
      const forbidden = await refused(client, 'add_api_tools', { slug: market.slug }, 'forbidden');
      expect(forbidden.details).toMatchObject({ missing_scope: 'proxy:call' });
      await refused(client, 'remove_api_tools', { slug: market.slug }, 'forbidden');
    }
    const person = await creditedPerson(0);
    const client = await connect(MODERN, person.apiKey);
    await refused(client, 'add_api_tools', { slug: 'no-such-api' }, 'not_found');
    const unknown = await refused(
      client,
      'add_api_tools',
      { slug: market.slug, endpoints: ['GET /nope'] },
      'validation_failed',
    );
    expect(unknown.details).toMatchObject({ unknown: ['GET /nope'] });
  });
});
