/**
 * The SDK's v2 MCP client against our agent-tool server, in either protocol revision: a connected client, a
 * hand-built 2026-07-28 POST (the `_meta` envelope and the routing headers), and an org's settled credit.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  Client,
  type ClientCapabilities,
  PROTOCOL_VERSION_META_KEY,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { untilUsageDrained } from '../../core/spend/usage-barrier.js';
import type { Services } from '../../platform/services.js';
import { sql } from './db.js';

export const MODERN = '2026-07-28';
export const LEGACY = '2025-11-25';
export const ERAS = [LEGACY, MODERN] as const;
export type Era = (typeof ERAS)[number];

/** A v2 client connected to `{serverUrl}/mcp` with a bearer token: 2025-11-25 (a session) or pinned to 2026-07-28. */
export async function connectV2(
  serverUrl: string,
  era: Era,
  token: string,
  options: { name?: string; capabilities?: ClientCapabilities; setup?: (client: Client) => void } = {},
): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${serverUrl}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client(
    { name: options.name ?? 'eras-test', version: '1.0.0' },
    {
      ...(era === MODERN ? { versionNegotiation: { mode: { pin: MODERN } } } : {}),
      ...(options.capabilities ? { capabilities: options.capabilities } : {}),
    },
  );
  options.setup?.(client);
  await client.connect(transport);
  return client;
}

/** A hand-built 2026-07-28 POST: the `_meta` envelope (with `capabilities`) and the routing headers. */
export function modernPost(
  serverUrl: string,
  token: string,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  capabilities: ClientCapabilities = {},
): Promise<Response> {
  return fetch(`${serverUrl}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          [PROTOCOL_VERSION_META_KEY]: MODERN,
          [CLIENT_INFO_META_KEY]: { name: 'raw', version: '1' },
          [CLIENT_CAPABILITIES_META_KEY]: capabilities,
        },
      },
    }),
  });
}

/** An org's cached credit once its usage has been committed. */
export async function creditOf(services: Pick<Services, 'spend'>, dbUrl: string, orgId: string): Promise<number> {
  await untilUsageDrained(services.spend, orgId);
  const [row] = await sql<{ credit_cents: string }>(dbUrl, 'select credit_cents from orgs where id = $1', [orgId]);
  return Number(row!.credit_cents);
}
