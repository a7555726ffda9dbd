// The agent-tool server with the real MCP SDK client over Streamable HTTP.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../../core/auth/scopes.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createMcpApp, type McpSurface } from '../../../mcp/app.js';
import { http, serve } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

describe('agent-tool server', () => {
  let stack: TestStack;
  let mcp: McpSurface;
  let server: RunningHttpServer;
  let apiKey: string;

  beforeAll(async () => {
    stack = await createTestStack();
    mcp = createMcpApp(stack.services);
    server = await serve(mcp.app.callback());
    apiKey = (await stack.services.accounts.register({ ip: '10.0.0.2' })).api_key;
  });
  afterAll(async () => {
    // Every money test file ends with the books consistent (each org's cached balance = its ledger sum).
    expect(await stack.services.ledger.findDrift()).toEqual([]);
    await mcp.close();
    await server.close();
    await stack.close();
  });

  async function connect(key: string) {
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    });
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(transport);
    return { client, transport };
  }

  it('answers an unauthenticated request with 401 and WWW-Authenticate resource_metadata', async () => {
    const res = await http(server.url, 'POST', '/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} },
    });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthenticated');
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", resource_metadata="${stack.config.urls.mcp}/.well-known/oauth-protected-resource", scope="${SCOPES.join(' ')}"`,
    );
  });

  it('serves protected-resource metadata', async () => {
    const res = await http(server.url, 'GET', '/.well-known/oauth-protected-resource');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      resource: `${stack.config.urls.mcp}/mcp`,
      authorization_servers: [stack.config.urls.publicBase],
      scopes_supported: expect.arrayContaining(['proxy:call', 'provider:write']),
    });
  });

  it('opens a session with a key, lists tools and registers through svc_register', async () => {
    const { client, transport } = await connect(apiKey);
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('svc_register');
    const result = await client.callTool({ name: 'svc_register', arguments: {} });
    expect(result.isError).toBeFalsy();
    const data = result.structuredContent as { org_id: string; api_key: string; credit_cents: number };
    expect(data.api_key).toMatch(/^svc_live_[0-9A-Za-z]{24}$/);
    expect(data.credit_cents).toBe(0);
    // The minted key works on the control plane's core path.
    const { principal } = await stack.services.keys.authenticate(data.api_key);
    expect(principal.orgId).toBe(data.org_id);
    await transport.terminateSession();
    await client.close();
  });

  it('refuses a session id it does not know, and one opened by another org', async () => {
    const { client, transport } = await connect(apiKey);
    const other = (await stack.services.accounts.register({ ip: '10.0.0.3' })).api_key;
    const body = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} };
    const headers = { 'mcp-session-id': transport.sessionId!, accept: 'application/json, text/event-stream' };
    const hijack = await http(server.url, 'POST', '/mcp', { token: other, body, headers });
    expect(hijack.status).toBe(404);
    const unknown = await http(server.url, 'POST', '/mcp', {
      token: apiKey,
      body,
      headers: { ...headers, 'mcp-session-id': '00000000-0000-4000-8000-000000000000' },
    });
    expect(unknown.status).toBe(404);
    await client.close();
  });

  it('asks for initialize first when there is no session', async () => {
    const res = await http(server.url, 'POST', '/mcp', {
      token: apiKey,
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
  });
});
