// Issue 31, section 4: refusals name the right party and say where the caller stands. A suspended org calling a free
// endpoint is told it is suspended (402 payment_required, reason suspended), never that "paid calls are refused";
// budget, daily cap, per-call and prepaid-credit refusals say what is spent, what is left and, for the daily cap, when
// it resets (the next UTC midnight), in the message and in `details` (integer cents). The same answer over HTTP, from
// the agent tools (call_api and an installed tool, through the gateway in process) and from the quote.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { createMcpApp, type McpSurface } from '../../../mcp/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import type { Person } from '../../helpers/accounts.js';
import { expectReconciled } from '../../helpers/books.js';
import { sql } from '../../helpers/db.js';
import { closeAll, createConsumer, createPaidApi } from '../../helpers/fixtures.js';
import { expectFailure, http, serve } from '../../helpers/http.js';
import type { LiveApi } from '../../helpers/listings.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';

type Refusal = { code: string; message: string; details: Record<string, unknown> };

describe('refusals that say what happened and where the caller stands', () => {
  let upstream: Upstream;
  let stack: TestStack;
  let gateway: GatewayHandler;
  let gw: RunningHttpServer;
  let api: RunningHttpServer;
  let mcp: McpSurface;
  let mcpServer: RunningHttpServer;
  let listing: LiveApi;
  const clients: Client[] = [];

  beforeAll(async () => {
    upstream = await startUpstream();
    stack = await createTestStack();
    listing = await createPaidApi(stack.services, {
      baseUrl: upstream.url,
      endpoints: [
        { method: 'GET', path: '/free', priceCents: 0 },
        { method: 'GET', path: '/paid', priceCents: 5 },
      ],
    });
    gateway = createGatewayHandler(stack.services);
    gw = await serve(gateway);
    api = await serve(createApiApp(stack.services).callback());
    mcp = createMcpApp(stack.services, { gateway });
    mcpServer = await serve(mcp.app.callback());
  });

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gateway?.drain.flush();
    await expectReconciled(stack?.services);
    await closeAll(mcp, mcpServer, gw, gateway, api, stack, upstream);
  });

  /** A consumer holding `credit` cents whose key has these caps. */
  async function consumer(
    credit: number,
    caps: { budget_cents?: number; daily_cap_cents?: number; per_call_max_cents?: number } = {},
  ): Promise<Person> {
    const person = await createConsumer(stack.services, credit);
    await sql(
      stack.db.url,
      'update api_keys set budget_cents = $2, daily_cap_cents = $3, per_call_max_cents = $4 where id = $1',
      [person.keyId, caps.budget_cents ?? null, caps.daily_cap_cents ?? null, caps.per_call_max_cents ?? null],
    );
    return person;
  }

  const call = (person: Person, path: string) =>
    http(gw.url, 'GET', `/v1/proxy/${listing.slug}${path}`, { token: person.apiKey });

  /** The gateway's refusal over HTTP, which the quote predicts word for word. */
  async function refusal(person: Person, path: string, status: number, code: string): Promise<Refusal> {
    const quote = await http(api.url, 'GET', `/v1/apis/${listing.slug}/quote?method=GET&path=${path}`, {
      token: person.apiKey,
    });
    const res = await call(person, path);
    expectFailure(res, status, code);
    const error = res.body.error as Refusal;
    expect(quote.body.data.admission).toEqual({
      allowed: false,
      error_code: code,
      status,
      message: error.message,
      details: error.details,
    });
    return error;
  }

  async function agent(person: Person): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(`${mcpServer.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${person.apiKey}` } },
    });
    const client = new Client({ name: 'refusal-figures-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    await client.listTools();
    return client;
  }

  async function toolRefusal(client: Client, name: string, args: Record<string, unknown>): Promise<Refusal> {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect(result.isError, JSON.stringify(result.content)).toBe(true);
    return (result.structuredContent as { error: Refusal }).error;
  }

  const tomorrow = () => {
    const d = new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`);
    d.setUTCDate(d.getUTCDate() + 1);
    return d.toISOString();
  };

  it('a suspended org calling a FREE endpoint is told it is suspended, over HTTP, the agent tools and the quote', async () => {
    const person = await consumer(100);
    await sql(stack.db.url, "update orgs set suspended = true, suspended_reason = 'operator: test' where id = $1", [
      person.orgId,
    ]);
    const seen = upstream.seen.length;
    const error = await refusal(person, '/free', 402, 'payment_required');
    expect(error.message).toMatch(/^This organization is suspended/);
    expect(error.message).toContain('this free endpoint included');
    expect(error.message).not.toMatch(/paid calls are refused/i);
    expect(error.details).toEqual({
      reason: 'suspended',
      price_cents: 0,
      billing_url: `${stack.config.urls.publicBase}/console/billing`,
    });
    const tool = await toolRefusal(await agent(person), 'call_api', { slug: listing.slug, endpoint: '/free' });
    expect(tool.code).toBe('payment_required');
    expect(tool.message).toBe(error.message);
    expect(tool.details).toMatchObject({ ...error.details, status: 402 });
    expect(upstream.seen.length).toBe(seen);
  });

  it('budget: what is spent and what is left, in the message and in cents', async () => {
    const person = await consumer(100, { budget_cents: 7 });
    expect((await call(person, '/paid')).status).toBe(200);
    await gateway.drain.flush();
    const error = await refusal(person, '/paid', 402, 'insufficient_budget');
    expect(error.details).toEqual({ price_cents: 5, budget_cents: 7, spent_cents: 5, left_cents: 2 });
    expect(error.message).toContain('$0.05 of $0.07 is spent');
    expect(error.message).toContain('$0.02 left');
  });

  it('daily cap: spent today, left today, and when it resets (the next UTC midnight), also from an installed tool', async () => {
    const person = await consumer(100, { daily_cap_cents: 8 });
    expect((await call(person, '/paid')).status).toBe(200);
    await gateway.drain.flush();
    const error = await refusal(person, '/paid', 402, 'daily_cap_exceeded');
    const resetsAt = tomorrow();
    expect(error.details).toEqual({
      price_cents: 5,
      daily_cap_cents: 8,
      spent_cents: 5,
      left_cents: 3,
      resets_at: resetsAt,
    });
    expect(error.message).toContain('$0.05 of $0.08 is spent today');
    expect(error.message).toContain('$0.03 left');
    expect(error.message).toContain(`resets at ${resetsAt}`);

    const client = await agent(person);
    const byCall = await toolRefusal(client, 'call_api', { slug: listing.slug, endpoint: '/paid' });
    expect(byCall).toMatchObject({ code: 'daily_cap_exceeded', message: error.message });
    expect(byCall.details).toMatchObject({ ...error.details, status: 402 });
    const added = (await client.callTool({
      name: 'add_api_tools',
      arguments: { slug: listing.slug },
    })) as CallToolResult;
    const names = (added.structuredContent as { added: string[] }).added;
    const paidTool = names.find((n) => n.includes('paid'))!;
    expect(paidTool).toBeDefined();
    const installed = await toolRefusal(client, paidTool, {});
    expect(installed).toMatchObject({ code: 'daily_cap_exceeded', message: error.message });
    expect(installed.details).toMatchObject({ spent_cents: 5, left_cents: 3, resets_at: resetsAt });
  });

  it('per-call maximum: the price against the maximum, and what the key has spent and has left', async () => {
    const person = await consumer(100, { per_call_max_cents: 4, budget_cents: 50 });
    const error = await refusal(person, '/paid', 402, 'per_call_limit_exceeded');
    expect(error.details).toEqual({ price_cents: 5, per_call_max_cents: 4, spent_cents: 0, left_cents: 50 });
    expect(error.message).toContain('This call costs $0.05, more than this key may spend on one call ($0.04)');
    expect(error.message).toContain('spent $0.00 of its $0.50 budget, $0.50 left');
  });

  it('prepaid credits exhausted: what is left of the credit and what the key has spent', async () => {
    const person = await consumer(7);
    expect((await call(person, '/paid')).status).toBe(200);
    await gateway.drain.flush();
    const error = await refusal(person, '/paid', 402, 'payment_required');
    expect(error.details).toEqual({
      price_cents: 5,
      reason: 'insufficient_credits',
      spent_cents: 5,
      left_cents: 2,
    });
    expect(error.message).toContain('$0.02 left');
    expect(error.message).toContain('this key has spent $0.05');
    // A free endpoint still answers: only paid calls need credit.
    expect((await call(person, '/free')).status).toBe(200);
  });
});
