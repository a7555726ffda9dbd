// The consumer tools of the agent-tool server through the real MCP SDK client over Streamable HTTP: every tool is
// listed with its parameters; reads answer the REST routes' data; set_budget obeys key governance and shows on
// GET /v1/keys; call_api and run_probe go through the gateway's one enforcement path in process (the provider's
// credential reaches the recording upstream, the consumer's key never does; refusals before any upstream call;
// idempotent retries billed once; an OAuth token acting as its key can call); billing tools need billing:write and
// return the URL a person opens; bad arguments are refused as invalid params, never a server error.
import { untilUsageDrained } from '../../../core/spend/usage-barrier.js';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { payloadRowId } from '../../../core/oauth/oauth-adapter.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { ADVERTISED_OUTPUT } from '../../../mcp/tool-listing.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { http, serve, describe as show } from '../../helpers/http.js';
import type { LiveApi } from '../../helpers/listings.js';
import { createCredentialedApi, createTermsApi, serveMcp, type ServedMcp } from '../../helpers/mcp-served.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startStripeMock, type StripeMock } from '../../helpers/stripe-mock.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { createConsumer, closeAll, NEW_ORG_BALANCE } from '../../helpers/fixtures.js';

const CONSUMER_TOOLS: Record<string, string[]> = {
  svc_register: [],
  discover_tools: ['query', 'category', 'max_results'],
  search_apis: ['query', 'category', 'sort', 'max_price_cents'],
  get_categories: [],
  get_market_overview: [],
  get_leaderboard: ['board', 'category'],
  request_api: ['query', 'email', 'notes'],
  get_api_details: ['slug'],
  get_schema: ['slug'],
  get_balance: [],
  create_checkout: ['pack', 'amount_cents'],
  billing_portal: [],
  billing_setup: [],
  get_usage: ['from', 'to'],
  set_budget: ['key_id', 'budget_cents', 'per_call_max_cents', 'daily_cap_cents'],
  provision_access: ['slug'],
  call_api: ['slug', 'endpoint', 'method', 'input', 'idempotency_key'],
  run_probe: ['slug', 'endpoint', 'input'],
  quote_call: ['slug', 'method', 'path'],
};
const REQUIRED: Record<string, string[]> = {
  discover_tools: ['query'],
  search_apis: ['query'],
  get_leaderboard: ['board'],
  request_api: ['query'],
  get_api_details: ['slug'],
  get_schema: ['slug'],
  call_api: ['slug', 'endpoint'],
  run_probe: ['slug', 'endpoint'],
  quote_call: ['slug', 'path'],
};

const PROVIDER_SECRET = 'provider-upstream-secret-42';

type Data = Record<string, any>;

describe('agent-tool server: consumer tools', () => {
  let stack: TestStack;
  let served: ServedMcp;
  let api: RunningHttpServer;
  let upstream: Upstream;
  let stripe: StripeMock;
  let provider: Person;
  let market: LiveApi;
  let termsApi: LiveApi;

  beforeAll(async () => {
    stripe = await startStripeMock();
    upstream = await startUpstream();
    stack = await createTestStack({ env: { STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_API_BASE: stripe.url } });
    served = await serveMcp(stack.services);
    api = await serve(createApiApp(stack.services).callback());
    provider = await createPerson(stack.services);
    await sql(stack.db.url, `insert into categories (slug, name) values ('finance', 'Finance') on conflict do nothing`);
    const upstreamOf = { provider, baseUrl: upstream.url, secret: PROVIDER_SECRET };
    market = await createCredentialedApi(stack.services, {
      ...upstreamOf,
      slug: `stockquotes-${randomBytes(3).toString('hex')}`,
      endpoints: [
        { method: 'GET', path: '/quotes/{symbol}', priceCents: 0 },
        { method: 'POST', path: '/orders', priceCents: 0 },
        { method: 'GET', path: '/paid/{symbol}', priceCents: 5 },
      ],
    });
    await sql(
      stack.db.url,
      `update apis set category = 'finance', summary = 'Live stock market quotes and prices by ticker symbol' where id = $1`,
      [market.apiId],
    );
    await stack.services.searchIndex.index([market.apiId]);
    termsApi = await createTermsApi(stack.services, { ...upstreamOf, restUrl: api.url });
  });
  afterAll(async () => {
    await served?.close();
    // Every money test file ends with the books consistent (each org's cached balance = its ledger sum).
    await stack?.services.earnings.foldAll();
    expect(await stack?.services.ledger.findDrift()).toEqual([]);
    await closeAll(api, stack, upstream);
    await stripe?.stop();
  });

  async function connect(token: string): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(`${served.server.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'consumer-tools-test', version: '1.0.0' });
    await client.connect(transport);
    // As an agent does: list the tools first, so the client checks every result (refusals included) against the
    // tool's output schema.
    await client.listTools();
    served.clients.push(client);
    return client;
  }

  async function tool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
    return (await client.callTool({ name, arguments: args })) as CallToolResult;
  }

  /** A successful result: its structured content, with the text block carrying the same JSON. */
  async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Data> {
    const result = await tool(client, name, args);
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
    expect(result.isError, `${name}: ${text}`).toBeFalsy();
    expect(JSON.parse(text)).toEqual(result.structuredContent);
    return result.structuredContent as Data;
  }

  /** A refusal: the error body in structured content, and its code in the text. */
  async function refused(client: Client, name: string, args: Record<string, unknown>, code: string): Promise<Data> {
    const result = await tool(client, name, args);
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
    expect(result.isError, `${name}: ${text}`).toBe(true);
    const error = (result.structuredContent as Data).error as Data;
    expect(error, text).toMatchObject({ code, message: expect.any(String) });
    expect(text.startsWith(`${code}: `)).toBe(true);
    return { ...error, text };
  }

  async function anonymousKey(): Promise<string> {
    const res = await http(api.url, 'POST', '/v1/register');
    expect(res.status, show(res)).toBe(201);
    return res.body.data.api_key as string;
  }

  async function creditedPerson(cents: number): Promise<Person> {
    const person = await createConsumer(stack.services, cents);
    return person;
  }

  // The org's answered calls are in Postgres first (the read barrier: docs/durability.md).
  const creditOf = async (orgId: string) => {
    await untilUsageDrained(stack.services.spend, orgId);
    const [row] = await sql<{ credit_cents: string }>(stack.db.url, 'select credit_cents from orgs where id = $1', [
      orgId,
    ]);
    return Number(row!.credit_cents);
  };

  it('lists every consumer tool with its parameters, a title and annotations', async () => {
    const client = await connect(await anonymousKey());
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const [name, params] of Object.entries(CONSUMER_TOOLS)) {
      const t = byName.get(name);
      expect(t, `${name} is listed`).toBeDefined();
      expect(Object.keys(t!.inputSchema.properties ?? {}), name).toEqual(expect.arrayContaining(params));
      expect(t!.inputSchema.required ?? [], name).toEqual(REQUIRED[name] ?? []);
      expect(t!.description!.length, name).toBeGreaterThan(40);
      expect(t!.title, name).toEqual(expect.any(String));
      // Output schemas are listed for the money path only (mcp/tool-listing.ts); every tool still returns structuredContent.
      expect(t!.outputSchema !== undefined, name).toBe(ADVERTISED_OUTPUT.has(name));
      expect(t!.annotations, name).toMatchObject({
        readOnlyHint: expect.any(Boolean),
        destructiveHint: expect.any(Boolean),
        idempotentHint: expect.any(Boolean),
        openWorldHint: expect.any(Boolean),
      });
    }
    expect(byName.get('get_schema')!.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    expect(byName.get('call_api')!.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
    expect(byName.get('get_leaderboard')!.inputSchema.properties!.board).toMatchObject({
      enum: ['top_grossing', 'most_used', 'most_reliable', 'best_value', 'trending', 'new_rising'],
    });
  });

  it('reads the catalog, the market and the balance with an anonymous key, as the REST routes answer', async () => {
    const client = await connect(await anonymousKey());
    expect(await ok(client, 'get_balance')).toEqual(NEW_ORG_BALANCE);

    const categories = await ok(client, 'get_categories');
    const rest = await http(api.url, 'GET', '/v1/categories');
    expect(categories).toEqual({ items: rest.body.data });
    expect(categories.items).toContainEqual({ slug: 'finance', name: 'Finance', api_count: 1 });

    const search = await ok(client, 'search_apis', {
      query: 'stock market quotes',
      category: 'finance',
      sort: 'relevance',
    });
    expect(search).toMatchObject({ total_exact: true, limit: 50, offset: 0, sort: 'relevance' });
    expect(search.items[0]).toMatchObject({ slug: market.slug, category: { slug: 'finance', name: 'Finance' } });
    const restSearch = await http(api.url, 'GET', '/v1/search?q=stock+market+quotes&category=finance&sort=relevance');
    expect(search.items).toEqual(restSearch.body.data);
    expect(search.total).toBe(restSearch.body.meta.total);
    expect(search.total_exact).toBe(restSearch.body.meta.total_exact);

    const compact = await ok(client, 'discover_tools', { query: 'share prices for a ticker', max_results: 3 });
    expect(compact).toMatchObject({ total: expect.any(Number), total_exact: true });
    expect(compact.items.length).toBeLessThanOrEqual(3);
    expect(compact.items).toContainEqual({
      slug: market.slug,
      name: market.slug,
      summary: 'Live stock market quotes and prices by ticker symbol',
      category: 'finance',
      has_free_endpoint: true,
      min_price_cents: 0,
      max_price_cents: 5,
      svc_score: expect.any(Number),
      callable: true,
    });

    const detail = await ok(client, 'get_api_details', { slug: market.slug });
    expect(detail).toEqual((await http(api.url, 'GET', `/v1/apis/${market.slug}`)).body.data);
    expect(detail.pricing).toMatchObject({ endpoints: 3, free_endpoints: 2, max_price_cents: 5 });

    const schema = await ok(client, 'get_schema', { slug: market.slug });
    expect(schema).toEqual((await http(api.url, 'GET', `/v1/apis/${market.slug}/schema`)).body.data);
    expect(schema.endpoints.map((e: Data) => `${e.method} ${e.path}`)).toEqual([
      'GET /quotes/{symbol}',
      'POST /orders',
      'GET /paid/{symbol}',
    ]);

    const board = await ok(client, 'get_leaderboard', { board: 'most_used', category: 'finance' });
    expect(board).toEqual({ board: 'most_used', metric: expect.any(String), items: expect.any(Array) });
    const overview = await ok(client, 'get_market_overview');
    expect(overview).toEqual((await http(api.url, 'GET', '/v1/market/overview')).body.data);

    const missing = await refused(client, 'get_api_details', { slug: 'no-such-api' }, 'not_found');
    expect(missing.message).toContain('no-such-api');
    const unknownCategory = await refused(
      client,
      'get_leaderboard',
      { board: 'trending', category: 'no-such-category' },
      'validation_failed',
    );
    expect(unknownCategory.message).toContain('no-such-category');

    const requested = await ok(client, 'request_api', {
      query: 'translate medieval welsh poetry',
      notes: 'for a class',
    });
    expect(requested).toMatchObject({
      query: 'translate medieval welsh poetry',
      votes: 1,
      status: 'open',
      merged: false,
    });
    const again = await ok(client, 'request_api', { query: 'translate medieval welsh poetry' });
    expect(again).toMatchObject({ id: requested.id, votes: 1, merged: true });
  });

  it('set_budget tightens the calling key (GET /v1/keys shows it) and cannot loosen it', async () => {
    const key = await anonymousKey();
    const client = await connect(key);
    const updated = await ok(client, 'set_budget', { budget_cents: 500, daily_cap_cents: 100 });
    expect(updated).toMatchObject({ budget_cents: 500, daily_cap_cents: 100, per_call_max_cents: null });
    const keys = await http(api.url, 'GET', '/v1/keys', { token: key });
    expect(keys.body.data).toHaveLength(1);
    expect(keys.body.data[0]).toMatchObject({ id: updated.id, budget_cents: 500, daily_cap_cents: 100 });

    const tighter = await ok(client, 'set_budget', { key_id: updated.id, per_call_max_cents: 10 });
    expect(tighter).toMatchObject({ budget_cents: 500, per_call_max_cents: 10 });
    const looser = await refused(client, 'set_budget', { budget_cents: 1_000 }, 'forbidden');
    expect(looser.details).toMatchObject({ loosened: ['budget_cents'], required_credential: 'session' });
    await refused(client, 'set_budget', { daily_cap_cents: null }, 'forbidden');
    await refused(client, 'set_budget', {}, 'validation_failed');
    const after = await http(api.url, 'GET', '/v1/keys', { token: key });
    expect(after.body.data[0]).toMatchObject({ budget_cents: 500, per_call_max_cents: 10, daily_cap_cents: 100 });

    // Another org's key is not this key's to change.
    const other = await http(api.url, 'GET', '/v1/keys', { token: provider.apiKey });
    await refused(client, 'set_budget', { key_id: other.body.data[0].id, budget_cents: 1 }, 'not_found');
  });

  it('quote_call answers as GET /v1/apis/{slug}/quote for the calling key', async () => {
    const key = await anonymousKey();
    const client = await connect(key);
    const free = await ok(client, 'quote_call', { slug: market.slug, path: '/quotes/ACME' });
    const rest = await http(
      api.url,
      'GET',
      `/v1/apis/${market.slug}/quote?method=GET&path=${encodeURIComponent('/quotes/ACME')}`,
      { token: key },
    );
    expect(free).toEqual(rest.body.data);
    expect(free).toMatchObject({ price_cents_effective: 0, admission: { allowed: true } });
    const paid = await ok(client, 'quote_call', { slug: market.slug, method: 'GET', path: '/paid/ACME' });
    expect(paid.admission).toMatchObject({ allowed: false, error_code: 'payment_required', status: 402 });
    expect(paid.admission.details.next_step).toContain('create_checkout');
    await refused(client, 'quote_call', { slug: market.slug, method: 'DELETE', path: '/quotes/ACME' }, 'not_found');
  });

  it('call_api on a free endpoint: the upstream sees the provider credential, never the key; usage is recorded', async () => {
    const key = await anonymousKey();
    const client = await connect(key);
    upstream.handle((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ symbol: 'ACME', price: 12.5, path: req.url }));
    });
    const before = upstream.seen.length;
    const result = await ok(client, 'call_api', { slug: market.slug, endpoint: '/quotes/ACME?currency=EUR' });
    expect(result).toEqual({
      status: 200,
      body: { symbol: 'ACME', price: 12.5, path: '/quotes/ACME?currency=EUR' },
      billing: {
        request_id: result.request_id,
        cost_cents: 0,
        price_cents_effective: 0,
        credit_applied_cents: 0,
        billable_cents: 0,
      },
      request_id: expect.stringMatching(/^req_/),
    });
    expect(upstream.seen.length).toBe(before + 1);
    const seen = upstream.seen.at(-1)!;
    expect(seen.headers.authorization).toBe(`Bearer ${PROVIDER_SECRET}`);
    expect(JSON.stringify(seen)).not.toContain(key);
    expect(JSON.stringify(seen)).not.toContain(key.slice(0, 12));

    // GET input becomes query parameters; POST input is the JSON body.
    await ok(client, 'run_probe', {
      slug: market.slug,
      endpoint: '/quotes/AC ME',
      input: { days: 3, tags: ['a', 'b'] },
    });
    expect(upstream.seen.at(-1)).toMatchObject({
      method: 'GET',
      url: '/quotes/AC%20ME?days=3&tags=a&tags=b',
      body: '',
    });
    await ok(client, 'call_api', {
      slug: market.slug,
      endpoint: '/orders',
      method: 'POST',
      input: { symbol: 'ACME', quantity: 2 },
    });
    const order = upstream.seen.at(-1)!;
    expect(order).toMatchObject({ method: 'POST', url: '/orders' });
    expect(JSON.parse(order.body)).toEqual({ symbol: 'ACME', quantity: 2 });
    expect(order.headers['content-type']).toBe('application/json');

    const usage = await ok(client, 'get_usage', { from: new Date(Date.now() - 60_000).toISOString() });
    expect(usage.summary).toMatchObject({ calls: 3, successful_calls: 3, cost_cents: 0 });
    expect(usage.items.map((u: Data) => `${u.method} ${u.path}`)).toEqual([
      'POST /orders',
      'GET /quotes/AC%20ME',
      'GET /quotes/ACME',
    ]);
    expect(usage.items[2].request_id).toBe(result.request_id);
    const rest = await http(api.url, 'GET', '/v1/usage', { token: key });
    expect(rest.body.data).toEqual(usage.items);
  });

  /** call_api by a new anonymous key, refused with `code`: its client, the refusal, the upstream's count before. */
  async function refusedCall(slug: string, endpoint: string, code: string) {
    const client = await connect(await anonymousKey());
    const before = upstream.seen.length;
    const refusal = await refused(client, 'call_api', { slug, endpoint }, code);
    return { client, before, refusal };
  }

  it('call_api on a paid endpoint without credit: payment_required, no upstream call, nothing charged', async () => {
    const { before, refusal } = await refusedCall(market.slug, '/paid/ACME', 'payment_required');
    expect(refusal.details).toMatchObject({
      reason: 'insufficient_credits',
      price_cents: 5,
      status: 402,
      request_id: expect.stringMatching(/^req_/),
    });
    expect(refusal.details.next_step).toContain('create_checkout');
    expect(refusal.details.next_step).toContain('billing:write');
    expect(upstream.seen.length).toBe(before);
  });

  it('call_api on an API with unaccepted required terms: 428 code with the approval URL, no upstream call', async () => {
    const { client, before, refusal } = await refusedCall(termsApi.slug, '/free', 'terms_acceptance_required');
    const approvalUrl = `${stack.config.urls.publicBase}/terms/${termsApi.slug}`;
    expect(refusal.details).toMatchObject({
      approval_url: approvalUrl,
      snapshot_url: expect.stringContaining('/snapshot'),
      document_id: expect.any(String),
      content_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      status: 428,
    });
    expect(refusal.text).toContain(`approval_url: ${approvalUrl}`);
    expect(upstream.seen.length).toBe(before);

    const access = await ok(client, 'provision_access', { slug: termsApi.slug });
    expect(access.api).toMatchObject({
      slug: termsApi.slug,
      terms: { required: true, all_required_accepted: false, approval_url: approvalUrl },
      ready: false,
    });
    expect(access.api.endpoints_checked[0].admission).toMatchObject({ error_code: 'terms_acceptance_required' });
    expect(access.api.next_steps.join(' ')).toContain(approvalUrl);
  });

  it('call_api with an idempotency_key twice: one upstream call, one debit, the second a replay', async () => {
    const person = await creditedPerson(20);
    const client = await connect(person.apiKey);
    upstream.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"price":99}');
    });
    const before = upstream.seen.length;
    const args = { slug: market.slug, endpoint: '/paid/ACME', idempotency_key: 'order-7' };
    const first = await ok(client, 'call_api', args);
    expect(first).toMatchObject({
      status: 200,
      body: { price: 99 },
      billing: { cost_cents: 5, credit_applied_cents: 5 },
    });
    const second = await ok(client, 'call_api', args);
    expect(second).toMatchObject({
      status: 200,
      body: null,
      billing: { cost_cents: 5, replayed: true, original_request_id: first.request_id },
    });
    expect(upstream.seen.length).toBe(before + 1);
    expect(await creditOf(person.orgId)).toBe(15);
    const reused = await refused(client, 'call_api', { ...args, endpoint: '/paid/OTHER' }, 'idempotency_key_reused');
    expect(reused.details.status).toBe(422);
    expect(upstream.seen.length).toBe(before + 1);

    // An upstream failure is refunded and reported with the gateway's code.
    upstream.handle((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":"boom"}');
    });
    const failed = await refused(client, 'call_api', { slug: market.slug, endpoint: '/paid/ACME' }, 'upstream_error');
    expect(failed.details).toMatchObject({ status: 502, upstream_status: 500 });
    expect(await creditOf(person.orgId)).toBe(15);

    const access = await ok(client, 'provision_access', { slug: market.slug });
    expect(access).toMatchObject({
      key: { id: person.keyId, spent_cents: 5 },
      balance: { credit_cents: 15 },
      missing_scopes: [],
      api: { ready: true, next_steps: [] },
    });
    expect(access.api.endpoints_checked.map((e: Data) => e.price_cents_effective)).toEqual([0, 5]);
  });

  it('spend refusals name what a person must do: approval mode gives the approval page, caps need a person', async () => {
    const person = await creditedPerson(50);
    await sql(stack.db.url, 'update api_keys set approval_mode = true where id = $1', [person.keyId]);
    const client = await connect(person.apiKey);
    const before = upstream.seen.length;
    const approval = await refused(client, 'call_api', { slug: market.slug, endpoint: '/paid/A' }, 'payment_required');
    const approvalUrl = `${stack.config.urls.publicBase}/approve/${person.keyId}`;
    expect(approval.details).toMatchObject({ reason: 'approval_required', approval_url: approvalUrl, status: 402 });
    expect(approval.text).toContain(`approval_url: ${approvalUrl}`);
    expect(approval.details.next_step).toContain(approvalUrl);

    const capped = await creditedPerson(50);
    const cappedClient = await connect(capped.apiKey);
    await ok(cappedClient, 'set_budget', { per_call_max_cents: 4 });
    const perCall = await refused(
      cappedClient,
      'call_api',
      { slug: market.slug, endpoint: '/paid/A' },
      'per_call_limit_exceeded',
    );
    expect(perCall.details).toMatchObject({ price_cents: 5, per_call_max_cents: 4, status: 402 });
    expect(perCall.details.next_step).toContain('person');
    expect(upstream.seen.length).toBe(before);
    expect(await creditOf(person.orgId)).toBe(50);
    expect(await creditOf(capped.orgId)).toBe(50);
  });

  it('provision_access reports the calling key, its balance and the scopes it lacks', async () => {
    const key = await anonymousKey();
    const client = await connect(key);
    const access = await ok(client, 'provision_access');
    const keys = await http(api.url, 'GET', '/v1/keys', { token: key });
    expect(access).toEqual({
      key: keys.body.data[0],
      balance: expect.objectContaining({ credit_cents: 0 }),
      missing_scopes: ['billing:write', 'provider:write'],
    });
    const paid = await ok(client, 'provision_access', { slug: market.slug });
    expect(paid.api).toMatchObject({ ready: false, terms: { required: false, all_required_accepted: true } });
    expect(paid.api.endpoints_checked).toEqual([
      expect.objectContaining({ price_cents_effective: 0, admission: { allowed: true } }),
      expect.objectContaining({ price_cents_effective: 5, admission: expect.objectContaining({ allowed: false }) }),
    ]);
    expect(paid.api.next_steps.join(' ')).toContain('create_checkout');
  });

  it('an OAuth access token acting as its key calls through the same gateway path', async () => {
    const person = await creditedPerson(10);
    const token = randomBytes(32).toString('base64url');
    await sql(
      stack.db.url,
      `insert into oauth_payloads (id, model, payload, grant_id, expires_at) values ($1, 'AccessToken', $2, 'grant-1', now() + interval '1 hour')`,
      [
        payloadRowId('AccessToken', token),
        JSON.stringify({
          accountId: person.keyId,
          clientId: 'client-1',
          grantId: 'grant-1',
          aud: `${stack.config.urls.mcp}/mcp`,
          // The token acts with what it was granted and its key holds (issue 21 item 4).
          scope: 'catalog:read proxy:call usage:read',
        }),
      ],
    );
    // A token acts only while its grant lives (reuse detection revokes the family).
    await sql(
      stack.db.url,
      `insert into oauth_payloads (id, model, payload, grant_id, expires_at) values ($1, 'Grant', '{}', 'grant-1', now() + interval '1 hour')`,
      [payloadRowId('Grant', 'grant-1')],
    );
    const client = await connect(token);
    upstream.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('plain answer');
    });
    const result = await ok(client, 'call_api', { slug: market.slug, endpoint: '/paid/XYZ' });
    expect(result).toMatchObject({ status: 200, body: 'plain answer', billing: { cost_cents: 5 } });
    expect(upstream.seen.at(-1)!.headers.authorization).toBe(`Bearer ${PROVIDER_SECRET}`);
    expect(await creditOf(person.orgId)).toBe(5);
    const quote = await ok(client, 'quote_call', { slug: market.slug, path: '/paid/XYZ' });
    expect(quote.admission).toEqual({ allowed: true });
  });

  it('billing tools: a bare anonymous key gets forbidden naming billing:write; an elevated key gets the URLs', async () => {
    const anonymous = await connect(await anonymousKey());
    for (const [name, args] of [
      ['create_checkout', { pack: 'starter' }],
      ['billing_setup', {}],
      ['billing_portal', {}],
    ] as const) {
      const refusal = await refused(anonymous, name, args, 'forbidden');
      expect(refusal.message).toContain('billing:write');
      expect(refusal.details).toMatchObject({ missing_scope: 'billing:write', how_to_get_scope: expect.any(String) });
    }

    const person = await createPerson(stack.services);
    const client = await connect(person.apiKey);
    const checkout = await ok(client, 'create_checkout', { pack: 'starter' });
    expect(checkout).toMatchObject({
      checkout_url: expect.stringMatching(/^https:\/\//),
      checkout_session_id: expect.any(String),
      amount_cents: 500,
      credit_cents: 500,
    });
    const custom = await ok(client, 'create_checkout', { amount_cents: 750 });
    expect(custom).toMatchObject({ amount_cents: 750, credit_cents: 750 });
    await refused(client, 'create_checkout', { pack: 'starter', amount_cents: 750 }, 'validation_failed');
    await refused(client, 'create_checkout', {}, 'validation_failed');
    const setup = await ok(client, 'billing_setup');
    expect(setup).toMatchObject({ url: expect.stringMatching(/^https:\/\//), setup_intent_id: expect.any(String) });
    const portal = await ok(client, 'billing_portal');
    expect(portal.url).toMatch(/^https:\/\//);
  });

  it('bad arguments are invalid params (-32602) or a validation error, never a server error', async () => {
    const client = await connect(await anonymousKey());
    const invalid = async (name: string, args: Record<string, unknown>) => {
      const result = await tool(client, name, args);
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      expect(result.isError, `${name} ${JSON.stringify(args)}: ${text}`).toBe(true);
      expect(text, name).toMatch(/-32602|validation_failed/);
      expect(text).not.toMatch(/internal_error/);
    };
    await invalid('get_leaderboard', { board: 'most_loved' });
    await invalid('search_apis', { query: 'x', limit: 501 });
    await invalid('search_apis', { query: 'x', sort: 'cheapest' });
    await invalid('search_apis', { query: 'x', offset: -1 });
    await invalid('discover_tools', { query: 'x', max_results: 0 });
    await invalid('discover_tools', {});
    await invalid('get_api_details', {});
    await invalid('call_api', { slug: market.slug, endpoint: 'quotes/ACME' });
    await invalid('call_api', { slug: market.slug, endpoint: '/quotes/ACME', method: 'FETCH' });
    await invalid('call_api', { slug: market.slug, endpoint: '/quotes/ACME', idempotency_key: 'has space' });
    await invalid('call_api', { slug: market.slug, endpoint: '/quotes/%00' });
    await invalid('run_probe', { slug: market.slug, endpoint: '/quotes/ACME', input: [1, 2] });
    await invalid('quote_call', { slug: market.slug, path: 'no-slash' });
    await invalid('set_budget', { budget_cents: -1 });
    await invalid('set_budget', { budget_cents: 1.5 });
    await invalid('get_usage', { from: 'yesterday' });
    await invalid('get_usage', { from: '2026-02-01', to: '2026-01-01' });
    await invalid('request_api', { query: 'x', email: 'not-an-email' });
    await invalid('create_checkout', { amount_cents: 10 });
    await invalid('get_balance', { unexpected: true });
    // Text no surface stores (NUL, lone surrogates) is refused for the whole request by the HTTP input rule: a 400.
    await expect(tool(client, 'get_api_details', { slug: 'a\u0000b' })).rejects.toThrow(/validation_failed/);
  });
});
