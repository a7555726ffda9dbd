// The SDK adapter that rebuilds an MCP session on a fresh transport (mcp/session-transport.ts). These fail if an SDK
// upgrade changes what the adapter relies on: the transport taking its session id from sessionIdGenerator at
// initialize, a replayed handshake initializing it and the McpServer, and the server's version negotiation.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createSessionTransport,
  negotiatedVersion,
  restoreSession,
  SessionRestoreError,
  type SessionHandshake,
} from '../../mcp/session-transport.js';

const ENDPOINT = 'http://127.0.0.1:1/mcp';
const ID = '6f1c3a52-8d2e-4b7a-9c1d-2e3f4a5b6c7d';
const HANDSHAKE: SessionHandshake = {
  id: ID,
  protocolVersion: '2025-06-18',
  clientInfo: { name: 'restored-agent', version: '2.1.0' },
  clientCapabilities: { elicitation: {}, roots: { listChanged: true } },
};

async function connected(onClosed: () => Promise<void> = () => Promise.resolve()) {
  const server = new McpServer({ name: 'test', version: '1' }, { capabilities: { tools: {} } });
  server.registerTool('echo', { inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  const transport = createSessionTransport(ID, onClosed);
  await server.connect(transport);
  return { server, transport };
}

function post(body: unknown, headers: Record<string, string> = {}) {
  return new Request(ENDPOINT, {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

const inSession = (id = ID) => ({ 'mcp-session-id': id, 'mcp-protocol-version': HANDSHAKE.protocolVersion });

describe('restoring an MCP session on a fresh transport', () => {
  it('serves the stored session id without a new initialize, and only that id', async () => {
    const { transport } = await connected();
    await restoreSession(transport, HANDSHAKE, ENDPOINT);
    expect(transport.sessionId).toBe(ID);

    const call = { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } };
    const ok = await transport.handleRequest(post(call, inSession()));
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('"text":"hi"');

    const other = await transport.handleRequest(post(call, inSession('00000000-0000-4000-8000-000000000000')));
    expect(other.status).toBe(404);
    const none = await transport.handleRequest(post(call, { 'mcp-protocol-version': HANDSHAKE.protocolVersion }));
    expect(none.status).toBe(400);
    await transport.close();
  });

  it('leaves the McpServer knowing the client exactly as its original initialize did', async () => {
    const original = await connected();
    await original.transport.handleRequest(
      post({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: HANDSHAKE.protocolVersion,
          capabilities: HANDSHAKE.clientCapabilities,
          clientInfo: HANDSHAKE.clientInfo,
        },
      }),
    );
    const restored = await connected();
    await restoreSession(restored.transport, HANDSHAKE, ENDPOINT);
    expect(restored.server.server.getClientVersion()).toEqual(HANDSHAKE.clientInfo);
    expect(restored.server.server.getClientCapabilities()).toEqual(original.server.server.getClientCapabilities());
    expect(restored.server.server.getClientCapabilities()).toMatchObject({ roots: { listChanged: true } });
    await Promise.all([original.transport.close(), restored.transport.close()]);
  });

  it('ends the session through onClosed when the client sends DELETE', async () => {
    let closed = 0;
    const { transport } = await connected(() => Promise.resolve(void closed++));
    await restoreSession(transport, HANDSHAKE, ENDPOINT);
    const res = await transport.handleRequest(new Request(ENDPOINT, { method: 'DELETE', headers: inSession() }));
    expect(res.status).toBe(200);
    expect(closed).toBe(1);
    const after = await transport.handleRequest(post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, inSession()));
    expect(after.status).toBe(404);
  });

  it('refuses to restore a version the SDK no longer speaks, or a transport already initialized', async () => {
    const gone = await connected();
    await expect(
      restoreSession(gone.transport, { ...HANDSHAKE, protocolVersion: '2000-01-01' }, ENDPOINT),
    ).rejects.toThrow(SessionRestoreError);
    const twice = await connected();
    await restoreSession(twice.transport, HANDSHAKE, ENDPOINT);
    await expect(restoreSession(twice.transport, HANDSHAKE, ENDPOINT)).rejects.toThrow(SessionRestoreError);
    await Promise.all([gone.transport.close(), twice.transport.close()]);
  });

  it("negotiates versions as the SDK's server does", async () => {
    for (const requested of ['2025-03-26', '2025-11-25', '2031-01-01']) {
      const { transport } = await connected();
      const res = await transport.handleRequest(
        post({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: requested, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
        }),
      );
      expect(await res.text()).toContain(`"protocolVersion":"${negotiatedVersion(requested)}"`);
      await transport.close();
    }
    expect(negotiatedVersion('2031-01-01')).toBe(LATEST_PROTOCOL_VERSION);
  });
});
