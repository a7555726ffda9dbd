// The provider, profile and terms tools of the agent-tool server, with the real MCP SDK Client over Streamable HTTP
// against the MCP app on the same services as a full stack (Postgres, Redis, Temporal with our worker, stripe-mock,
// SMTP capture, a loopback upstream). Every step taken over tools is checked over REST.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { workflowIds } from '../../../core/temporal/contracts.js';
import { createMcpApp, type McpSurface } from '../../../mcp/app.js';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { startFullStack, tokenFromMail, type FullStack } from '../../helpers/full-stack.js';
import { expectFailure, http, serve, describe as show } from '../../helpers/http.js';
import { startStripeMock, type StripeMock } from '../../helpers/stripe-mock.js';
import type { Upstream } from '../../helpers/upstream.js';
import { startOpenApiUpstream } from '../../helpers/openapi-upstream.js';
import { closeAll } from '../../helpers/fixtures.js';
const TERMS = '# Terms of Sky\n\n1. Be kind to the upstream.\n';

const PROVIDER_TOOLS = [
  'provider_list_apis',
  'provider_get_api',
  'provider_create_api',
  'provider_update_api',
  'provider_change_endpoints',
  'provider_retire_api',
  'provider_set_credentials',
  'provider_set_pricing',
  'provider_verify',
  'provider_publish',
  'provider_unpublish',
  'provider_cancel_pending_pricing',
  'provider_analytics',
  'provider_connect_onboard',
];
const PROFILE_TOOLS = ['list_providers', 'get_provider_profile', 'get_my_profile', 'update_my_profile'];
const TERMS_TOOLS = [
  'get_api_terms',
  'get_api_terms_status',
  'accept_api_terms',
  'provider_list_documents',
  'provider_create_document',
  'provider_activate_document',
];

type Data = Record<string, any>;

interface Agent {
  client: Client;
  /** Call a tool that must succeed; returns its structured content. */
  ok(name: string, args?: Record<string, unknown>): Promise<Data>;
  /** Call a tool that must fail with an error result carrying `code`; returns the error object. */
  refused(name: string, args: Record<string, unknown>, code: string): Promise<Data & { text: string }>;
  /** Call a tool with arguments its input schema refuses: the SDK's error result, before the tool runs. */
  invalid(name: string, args: Record<string, unknown>): Promise<string>;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
}

describe('agent-tool server: provider, profile and terms tools', () => {
  let s: FullStack;
  let stripe: StripeMock;
  let upstream: Upstream;
  let mcp: McpSurface;
  let mcpServer: RunningHttpServer;
  const clients: Client[] = [];

  let anonymousKey: string;
  /** An org that registered anonymously and verified an email: its key was elevated in place. */
  let provider: { orgId: string; apiKey: string };
  let stranger: Person;
  let consumer: Person;
  let agent: Agent;

  async function connect(key: string): Promise<Agent> {
    const transport = new StreamableHTTPClientTransport(new URL(`${mcpServer.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    });
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    client.onerror = () => undefined;
    await client.connect(transport);
    clients.push(client);
    // Listing first, as agents do: the client then checks every result's structured content against the schemas.
    await client.listTools();
    const call = (name: string, args: Record<string, unknown> = {}) =>
      client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
    return {
      client,
      call,
      async ok(name, args) {
        const result = await call(name, args);
        expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
        const text = (result.content[0] as { text: string }).text;
        expect(JSON.parse(text)).toEqual(result.structuredContent);
        return result.structuredContent as Data;
      },
      async refused(name, args, code) {
        const result = await call(name, args);
        expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBe(true);
        const error = (result.structuredContent as { ok: false; error: Data }).error;
        expect(error.code, JSON.stringify(error)).toBe(code);
        const text = (result.content[0] as { text: string }).text;
        expect(text.startsWith(`${code}: `)).toBe(true);
        return { ...error, text };
      },
      async invalid(name, args) {
        const result = await call(name, args);
        expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBe(true);
        const text = (result.content[0] as { text: string }).text;
        expect(text).toMatch(/^(MCP error -32602: )?Input validation error/);
        return text;
      },
    };
  }

  const rest = (method: string, p: string, token?: string, body?: unknown) => http(s.base, method, p, { token, body });

  beforeAll(async () => {
    upstream = await startOpenApiUpstream((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    stripe = await startStripeMock();
    // No recurring schedules: tool answers are compared with the REST route's, read a moment later; a catalog rollup
    // in between would change analytics totals and a profile's stats (docs/testing.md).
    s = await startFullStack({
      env: { UPSTREAM_ALLOW_PRIVATE: 'true', STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_API_BASE: stripe.url },
      schedules: false,
    });
    mcp = createMcpApp(s.services);
    mcpServer = await serve(mcp.app.callback());

    anonymousKey = (await rest('POST', '/v1/register')).body.data.api_key;

    // The agent-first path to provider:write: register, attach an email, follow the mailed link.
    const registered = await rest('POST', '/v1/register');
    expect(registered.status, show(registered)).toBe(201);
    const email = `provider-${Date.now()}@example.com`;
    const attach = await rest('POST', '/v1/me/email', registered.body.data.api_key, { email });
    expect(attach.status, show(attach)).toBe(200);
    const token = tokenFromMail((await s.smtp.waitForMail(email, { subject: /Verify/ })).text);
    const verified = await rest('POST', '/v1/auth/verify-email', undefined, { token });
    expect(verified.body.data.scopes_added, show(verified)).toEqual(['billing:write', 'provider:write']);
    provider = { orgId: registered.body.data.org_id, apiKey: registered.body.data.api_key };

    stranger = await createPerson(s.services);
    consumer = await createPerson(s.services);
    agent = await connect(provider.apiKey);
  });

  afterAll(async () => {
    // Every money test file ends with the books consistent (each org's cached balance = its ledger sum).
    expect(await s.services.ledger.findDrift()).toEqual([]);
    await Promise.allSettled(clients.map((c) => c.close()));
    await closeAll(mcp, mcpServer, s);
    await stripe?.stop();
    await upstream?.close();
  });

  it('lists every tool to every caller, annotated, and refuses provider:write tools to an anonymous key', async () => {
    const anonymous = await connect(anonymousKey);
    const { tools } = await anonymous.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of [...PROVIDER_TOOLS, ...PROFILE_TOOLS, ...TERMS_TOOLS]) {
      const tool = byName.get(name);
      expect(tool, name).toBeDefined();
      expect(tool!.description!.length, name).toBeGreaterThan(40);
      // No output schema is listed for these (mcp/tool-listing.ts); results still carry structuredContent.
      expect(tool!.outputSchema, name).toBeUndefined();
      expect(tool!.title, name).toEqual(expect.any(String));
      const a = tool!.annotations!;
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        expect(typeof a[hint], `${name}.${hint}`).toBe('boolean');
      }
    }
    // The spec's parameter names.
    const params = (name: string) => Object.keys(byName.get(name)!.inputSchema.properties ?? {});
    expect(params('provider_create_api')).toEqual(['openapi_url', 'external_url', 'body']);
    expect(params('provider_publish')).toEqual(['api_id', 'accept_terms', 'skip_verify']);
    expect(params('provider_cancel_pending_pricing')).toEqual(['api_id', 'endpoint_id']);
    expect(params('provider_change_endpoints')).toEqual([
      'api_id',
      'add',
      'update',
      'remove',
      'openapi_url',
      'keep_missing',
      'discard_revision',
    ]);
    expect(params('provider_retire_api')).toEqual(['api_id', 'action']);
    expect(params('provider_set_credentials')).toEqual(expect.arrayContaining(['api_id', 'secret', 'injection']));
    expect(params('accept_api_terms')).toEqual(['slug', 'document_id', 'content_hash']);
    expect(params('list_providers')).toEqual(['query', 'limit', 'offset']);
    expect(byName.get('provider_get_api')!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.get('provider_unpublish')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });

    const refused = await anonymous.refused(
      'provider_create_api',
      { body: { name: 'X', slug: 'anon-x', summary: 'x', base_url: upstream.url } },
      'forbidden',
    );
    expect(refused.details).toEqual({ missing_scope: 'provider:write' });
    expect(refused.text).toContain('provider:write');
    for (const name of ['provider_list_apis', 'provider_analytics', 'provider_connect_onboard', 'get_my_profile']) {
      expect((await anonymous.refused(name, {}, 'forbidden')).details).toEqual({ missing_scope: 'provider:write' });
    }
    expect(
      (await anonymous.refused('provider_create_document', { kind: 'terms', version: '1', body: 'x' }, 'forbidden'))
        .details,
    ).toEqual({ missing_scope: 'provider:write' });
    // Nothing was created.
    expectFailure(await rest('GET', '/v1/apis/anon-x'), 404, 'not_found');
    // Public tools work for the anonymous key.
    expect((await anonymous.ok('list_providers', {})).items).toEqual(expect.any(Array));
  });

  let skyId: string;
  let weatherId: string;
  let forecastId: string;

  it('creates from a body and by OpenAPI import, each visible over REST', async () => {
    const sky = await agent.ok('provider_create_api', {
      body: {
        name: 'Sky',
        slug: 'sky-tools',
        summary: 'Current sky conditions',
        base_url: upstream.url,
        endpoints: [{ method: 'get', path: '/now', price_cents: 2 }],
      },
    });
    expect(sky).toMatchObject({ slug: 'sky-tools', status: 'draft', endpoints: [{ method: 'GET', price_cents: 2 }] });
    skyId = sky.api_id;
    const own = await rest('GET', `/v1/provider/apis/${skyId}`, provider.apiKey);
    expect(own.status, show(own)).toBe(200);
    expect(own.body.data).toEqual(sky);

    const weather = await agent.ok('provider_create_api', {
      openapi_url: `${upstream.url}/openapi.json`,
      body: { name: 'Weather', slug: 'weather-tools', summary: 'Forecasts and alerts', base_url: `${upstream.url}/v2` },
    });
    expect(weather).toMatchObject({
      status: 'draft',
      import_source: { type: 'openapi_url', openapi_version: '3.1.0', operations: 6 },
    });
    expect(weather.endpoints).toHaveLength(6);
    weatherId = weather.api_id;
    forecastId = weather.endpoints.find((e: Data) => e.path === '/forecast/{city}').endpoint_id;
    const listed = await rest('GET', '/v1/provider/apis', provider.apiKey);
    expect(listed.body.data.map((a: Data) => a.api_id)).toEqual([skyId, weatherId]);
    const overTools = await agent.ok('provider_list_apis');
    expect(overTools).toEqual({ items: listed.body.data, pagination: listed.body.meta.pagination });
    expect(await agent.ok('provider_get_api', { api_id: weatherId })).toEqual(
      (await rest('GET', `/v1/provider/apis/${weatherId}`, provider.apiKey)).body.data,
    );

    // The REST rules, as error results.
    expect(
      (
        await agent.refused(
          'provider_create_api',
          { body: { name: 'Sky', slug: 'sky-tools', summary: 's', base_url: upstream.url } },
          'conflict',
        )
      ).details,
    ).toEqual({ field: 'slug' });
    const missing = await agent.refused(
      'provider_create_api',
      { openapi_url: `${upstream.url}/openapi.json` },
      'validation_failed',
    );
    expect(missing.details!.issues.map((i: Data) => i.path)).toEqual(
      expect.arrayContaining(['body.name', 'body.slug', 'body.summary', 'body.base_url']),
    );
    await agent.refused(
      'provider_create_api',
      {
        openapi_url: `${upstream.url}/openapi.json`,
        external_url: `${upstream.url}/docs`,
        body: { name: 'W', slug: 'w2', summary: 's', base_url: upstream.url },
      },
      'validation_failed',
    );
    const ext = await agent.ok('provider_create_api', {
      external_url: `${upstream.url}/docs`,
      body: { name: 'Docs only', slug: 'docs-only-tools', summary: 's', base_url: upstream.url },
    });
    expect(ext.import_source).toMatchObject({ type: 'external_url', url: `${upstream.url}/docs` });
    // An argument the schema does not know is refused (strict, as REST is); nothing was created.
    await agent.invalid('provider_create_api', {
      body: { name: 'U', slug: 'unknown-arg', summary: 's', base_url: upstream.url, price: 3 },
    });
    await agent.invalid('provider_set_pricing', {
      api_id: 'api_x',
      endpoints: [{ endpoint_id: 'ep_x', price_cents: -1 }],
    });
    const slugs = (await rest('GET', '/v1/provider/apis', provider.apiKey)).body.data.map((a: Data) => a.slug);
    expect(slugs).toEqual(['sky-tools', 'weather-tools', 'docs-only-tools']);
  });

  it('updates metadata (category, tags), stores credentials, prices, verifies and publishes', async () => {
    const updated = await agent.ok('provider_update_api', {
      api_id: weatherId,
      category: 'weather',
      tags: ['Forecast', 'alerts', 'forecast'],
      description: 'Weather for builders',
    });
    expect(updated).toMatchObject({ category: 'weather', tags: ['forecast', 'alerts'] });
    expect((await rest('GET', `/v1/provider/apis/${weatherId}`, provider.apiKey)).body.data).toMatchObject({
      category: 'weather',
      tags: ['forecast', 'alerts'],
      description: 'Weather for builders',
    });
    expect((await agent.refused('provider_update_api', { api_id: weatherId }, 'validation_failed')).message).toMatch(
      /at least one field/,
    );
    expect(
      (
        await agent.refused(
          'provider_update_api',
          { api_id: weatherId, category: 'no-such-category' },
          'validation_failed',
        )
      ).details,
    ).toMatchObject({ field: 'category' });

    const cred = await agent.ok('provider_set_credentials', {
      api_id: weatherId,
      secret: 'up-secret-9',
      injection: 'bearer',
    });
    expect(cred).toEqual({ set: true, injection: 'bearer', injection_name: null, updated_at: expect.any(String) });
    const detail = await rest('GET', `/v1/provider/apis/${weatherId}`, provider.apiKey);
    expect(detail.body.data.credential).toEqual(cred);
    expect(detail.text).not.toContain('up-secret-9');
    await agent.refused(
      'provider_set_credentials',
      { api_id: weatherId, secret: 's', injection: 'header' },
      'validation_failed',
    );

    const priced = await agent.ok('provider_set_pricing', {
      api_id: weatherId,
      endpoints: [{ endpoint_id: forecastId, price_cents: 5 }],
    });
    expect(priced.endpoints).toMatchObject([{ endpoint_id: forecastId, price_cents: 5, price_increase: null }]);
    const restEndpoint = (
      await rest('GET', `/v1/provider/apis/${weatherId}`, provider.apiKey)
    ).body.data.endpoints.find((e: Data) => e.endpoint_id === forecastId);
    expect(restEndpoint.price_cents).toBe(5);
    await agent.refused(
      'provider_set_pricing',
      { api_id: weatherId, endpoints: [{ endpoint_id: 'ep_00000000000000000000000000', price_cents: 1 }] },
      'not_found',
    );

    const seen = upstream.seen.length;
    const verified = await agent.ok('provider_verify', { api_id: weatherId });
    expect(verified).toMatchObject({
      api_id: weatherId,
      action: 'verify',
      status: 'draft',
      verification: { passed: true },
    });
    const smoke = upstream.seen.slice(seen);
    expect(smoke.length).toBeGreaterThan(0);
    for (const c of smoke) expect(c.headers.authorization).toBe('Bearer up-secret-9');
    // The same workflow REST starts, under the listing's business id.
    const run = await s.temporal.client.workflow.getHandle(workflowIds.publish(weatherId)).describe();
    expect(run.type).toBe('verifyAndPublishWorkflow');

    const noTerms = await agent.refused('provider_publish', { api_id: weatherId }, 'validation_failed');
    expect(noTerms.details).toEqual({ field: 'accept_terms' });
    expectFailure(await rest('GET', '/v1/apis/weather-tools'), 404, 'not_found');
    const published = await agent.ok('provider_publish', { api_id: weatherId, accept_terms: true });
    expect(published).toMatchObject({ api_id: weatherId, action: 'publish', status: 'live' });
    const listing = await rest('GET', '/v1/apis/weather-tools');
    expect(listing.status, show(listing)).toBe(200);
    expect(listing.body.data).toMatchObject({
      slug: 'weather-tools',
      category: { slug: 'weather' },
      tags: ['forecast', 'alerts'],
      pricing: { endpoints: 6, max_price_cents: 5 },
    });
    expect(await agent.ok('provider_publish', { api_id: skyId, accept_terms: true, skip_verify: true })).toMatchObject({
      status: 'live',
    });
    expect((await rest('GET', '/v1/apis/sky-tools')).status).toBe(200);
  });

  it('schedules a price increase on a live listing and cancels it', async () => {
    const increased = await agent.ok('provider_set_pricing', {
      api_id: weatherId,
      endpoints: [{ endpoint_id: forecastId, price_cents: 9 }],
    });
    expect(increased.endpoints[0]).toMatchObject({ price_cents: 5, price_increase: { price_cents: 9 } });
    const pending = (await rest('GET', `/v1/provider/apis/${weatherId}`, provider.apiKey)).body.data.endpoints.find(
      (e: Data) => e.endpoint_id === forecastId,
    );
    expect(pending.price_increase).toMatchObject({ price_cents: 9 });

    const cancelled = await agent.ok('provider_cancel_pending_pricing', { api_id: weatherId, endpoint_id: forecastId });
    expect(cancelled).toMatchObject({ endpoint_id: forecastId, price_cents: 5, price_increase: null });
    const after = (await rest('GET', `/v1/provider/apis/${weatherId}`, provider.apiKey)).body.data.endpoints.find(
      (e: Data) => e.endpoint_id === forecastId,
    );
    expect(after.price_increase).toBeNull();
    await agent.refused('provider_cancel_pending_pricing', { api_id: weatherId, endpoint_id: forecastId }, 'not_found');
  });

  let documentId: string;

  it('creates, activates and lists documents; terms status before and after a person accepts', async () => {
    const created = await agent.ok('provider_create_document', {
      kind: 'terms',
      version: '1.0',
      title: 'Terms of Sky',
      body: TERMS,
      api_id: skyId,
      acceptance_mode: 'required',
    });
    expect(created).toMatchObject({ kind: 'terms', source: 'hosted', status: 'draft', api_id: skyId });
    documentId = created.document_id;
    expect(await agent.invalid('provider_create_document', { kind: 'terms', version: '1', body: '' })).toContain(
      'body',
    );
    expect(
      await agent.invalid('provider_create_document', { kind: 'terms', version: '1', body: 'x', source: 'external' }),
    ).toContain('source');

    const activated = await agent.ok('provider_activate_document', { document_id: documentId });
    expect(activated).toMatchObject({ document_id: documentId, status: 'active', activated_at: expect.any(String) });
    const listed = await agent.ok('provider_list_documents', { api_id: skyId, kind: 'terms' });
    const overRest = await rest('GET', `/v1/provider/documents?api_id=${skyId}&kind=terms`, provider.apiKey);
    expect(listed).toEqual({ items: overRest.body.data });
    expect(listed.items.map((d: Data) => d.document_id)).toEqual([documentId]);
    expect((await agent.ok('provider_list_documents', { api_id: weatherId })).items).toEqual([]);

    // The consumer's agent, with an ordinary key.
    const buyer = await connect(consumer.apiKey);
    const terms = await buyer.ok('get_api_terms', { slug: 'sky-tools' });
    expect(terms).toEqual((await rest('GET', '/v1/apis/sky-tools/terms', consumer.apiKey)).body.data);
    expect(terms).toMatchObject({
      all_required_accepted: false,
      documents: [{ document_id: documentId, accepted: false }],
    });

    const before = await buyer.call('get_api_terms_status', { slug: 'sky-tools' });
    const status = before.structuredContent as Data;
    expect(status).toMatchObject({
      api: 'sky-tools',
      may_call: false,
      missing: [{ document_id: documentId, content_hash: created.content_hash, snapshot_url: created.snapshot_url }],
      approval_url: `${s.config.urls.publicBase}/terms/sky-tools`,
    });
    expect(status.next_step).toContain(status.approval_url);
    expect(before.content.map((c) => (c as { text: string }).text).join('\n')).toContain(status.approval_url);

    // A key cannot accept: the refusal carries the page to hand to a person, whatever the arguments.
    for (const args of [
      { slug: 'sky-tools', document_id: documentId, content_hash: created.content_hash },
      { slug: 'sky-tools' },
    ]) {
      const refused = await buyer.refused('accept_api_terms', args, 'forbidden');
      expect(refused.details).toEqual({ required_credential: 'session', approval_url: status.approval_url });
      expect(refused.text).toContain(status.approval_url);
    }
    await buyer.refused('accept_api_terms', { slug: 'no-such-api' }, 'not_found');

    // A person (the consumer org's verified owner) accepts over REST; the agent sees it.
    const accepted = await rest('POST', '/v1/apis/sky-tools/terms/accept', consumer.session, {
      document_id: documentId,
      content_hash: created.content_hash,
    });
    expect(accepted.status, show(accepted)).toBe(200);
    expect(await buyer.ok('get_api_terms_status', { slug: 'sky-tools' })).toMatchObject({
      may_call: true,
      missing: [],
      next_step: null,
    });
    expect((await buyer.ok('get_api_terms', { slug: 'sky-tools' })).all_required_accepted).toBe(true);
  });

  it('reads analytics and starts Connect onboarding with a URL for a person', async () => {
    const analytics = await agent.ok('provider_analytics', {});
    const overRest = await rest('GET', '/v1/provider/analytics', provider.apiKey);
    expect(analytics.totals).toEqual(overRest.body.data.totals);
    expect(analytics.by_api.map((a: Data) => a.slug).sort()).toEqual(['docs-only-tools', 'sky-tools', 'weather-tools']);
    await agent.refused('provider_analytics', { from: '2026-01-05', to: '2026-01-01' }, 'validation_failed');

    const onboard = await agent.call('provider_connect_onboard', {});
    expect(onboard.isError, JSON.stringify(onboard.content)).toBeFalsy();
    const data = onboard.structuredContent as Data;
    expect(data).toMatchObject({
      url: expect.stringMatching(/^https:\/\//),
      account_id: expect.stringMatching(/^acct_/),
      status: 'pending',
      workflow_id: workflowIds.connect(provider.orgId),
    });
    expect((onboard.content[1] as { text: string }).text).toContain(data.url);
    // The same account over REST: the tool went through the same core path.
    const again = await rest('POST', '/v1/provider/connect/onboard', provider.apiKey);
    expect(again.body.data.account_id).toBe(data.account_id);
  });

  it('reads and updates the own profile; the directory shows it', async () => {
    const updated = await agent.ok('update_my_profile', {
      display_name: 'Sky Tools',
      slug: 'sky-tools-co',
      bio: 'Weather for agents',
      contact_email: 'Ops@Sky.example',
    });
    expect(updated).toMatchObject({ org_id: provider.orgId, slug: 'sky-tools-co', contact_email: 'ops@sky.example' });
    expect((await rest('GET', '/v1/me/profile', provider.apiKey)).body.data).toEqual(updated);
    expect(await agent.ok('get_my_profile')).toEqual(updated);
    expect(await agent.invalid('update_my_profile', { slug: 'admin' })).toContain('reserved');
    await agent.refused('update_my_profile', {}, 'validation_failed');

    const found = await agent.ok('list_providers', { query: 'agents', limit: 5 });
    expect(found.items.map((p: Data) => p.slug)).toEqual(['sky-tools-co']);
    expect(found.items[0]).not.toHaveProperty('contact_email');
    expect(found).toEqual({
      items: (await rest('GET', '/v1/providers?q=agents&limit=5')).body.data,
      pagination: { limit: 5, offset: 0, total: 1, has_more: false },
    });
    const profile = await agent.ok('get_provider_profile', { slug: 'sky-tools-co' });
    expect(profile).toEqual((await rest('GET', '/v1/providers/sky-tools-co')).body.data);
    expect(profile.apis.map((a: Data) => a.slug).sort()).toEqual(['sky-tools', 'weather-tools']);
    await agent.refused('get_provider_profile', { slug: 'nobody-here' }, 'not_found');
  });

  it('answers another org’s api_id or document with the same 404 as REST', async () => {
    const other = await connect(stranger.apiKey);
    const viaRest = await rest('GET', `/v1/provider/apis/${weatherId}`, stranger.apiKey);
    expectFailure(viaRest, 404, 'not_found');
    const viaTool = await other.refused('provider_get_api', { api_id: weatherId }, 'not_found');
    expect(viaTool.message).toBe(viaRest.body.error.message);
    for (const [name, args] of [
      ['provider_update_api', { api_id: weatherId, name: 'Mine now' }],
      ['provider_set_credentials', { api_id: weatherId, secret: 'stolen' }],
      ['provider_set_pricing', { api_id: weatherId, endpoints: [{ endpoint_id: forecastId, price_cents: 0 }] }],
      ['provider_verify', { api_id: weatherId }],
      ['provider_publish', { api_id: weatherId, accept_terms: true }],
      ['provider_unpublish', { api_id: weatherId }],
      ['provider_cancel_pending_pricing', { api_id: weatherId, endpoint_id: forecastId }],
      ['provider_change_endpoints', { api_id: weatherId, remove: [forecastId] }],
      ['provider_retire_api', { api_id: weatherId, action: 'delete' }],
      ['provider_activate_document', { document_id: documentId }],
      ['provider_create_document', { kind: 'terms', version: '1', body: 'x', api_id: weatherId }],
    ] as const) {
      await other.refused(name, args, 'not_found');
    }
    expect((await other.ok('provider_list_apis')).items).toEqual([]);
    expect((await other.ok('provider_list_documents', { api_id: skyId })).items).toEqual([]);
    // Nothing changed.
    expect((await rest('GET', '/v1/apis/weather-tools')).body.data.name).toBe('Weather');
  });

  it('unpublishes: the listing leaves the catalog', async () => {
    const unpublished = await agent.ok('provider_unpublish', { api_id: weatherId });
    expect(unpublished).toMatchObject({ api_id: weatherId, action: 'unpublish', status: 'draft' });
    expectFailure(await rest('GET', '/v1/apis/weather-tools'), 404, 'not_found');
    expect((await rest('GET', `/v1/provider/apis/${weatherId}`, provider.apiKey)).body.data.status).toBe('draft');
    expect(await agent.ok('provider_unpublish', { api_id: weatherId })).toMatchObject({ status: 'draft' });
  });
});
