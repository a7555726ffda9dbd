/**
 * Driving the agent-tool server in both MCP eras with the SDK's v2 client (@modelcontextprotocol/client): a client
 * per era (2025-11-25 by default, 2026-07-28 pinned), tool calls expected to succeed or to be refused with a code, a
 * hand-built 2026-07-28 POST, and the credit a test reads back once the org's usage is drained.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  Client,
  type ClientCapabilities,
  PROTOCOL_VERSION_META_KEY,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { expect } from 'vitest';
import { untilUsageDrained } from '../../core/spend/usage-barrier.js';
import type { Scope } from '../../core/auth/scopes.js';
import { createPerson, type Person } from './accounts.js';
import { sql } from './db.js';
import { http, describe as show } from './http.js';
import type { TestStack } from './services.js';

export const MODERN = '2026-07-28';
export const LEGACY = '2025-11-25';
export const ERAS = [LEGACY, MODERN] as const;
export type Era = (typeof ERAS)[number];
export type Data = Record<string, any>;

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

/** A test file's served agent-tool server: its URL and the clients it closes. */
interface Served {
  server: { url: string };
  clients: { close: () => Promise<void> }[];
}

/**
 * The era helpers of a test file, bound to its stack and served server (both made in beforeAll, so read at each call):
 * a client of `era` named `name` (remembered to close), a credited person, an org's settled credit, a 2026-07-28 POST.
 */
export function erasOf(stackOf: () => TestStack, servedOf: () => Served, name: string) {
  return {
    connect: async (era: Era, token: string, url = servedOf().server.url) => {
      const client = await connectV2(url, era, token, { name });
      servedOf().clients.push(client);
      return client;
    },
    creditedPerson: (cents: number, scopes?: Scope[]) => creditedPerson(stackOf(), cents, scopes),
    creditOf: (orgId: string) => creditOf(stackOf(), orgId),
    modernPost: (token: string, method: string, params?: Record<string, unknown>, headers?: Record<string, string>) =>
      modernPost(servedOf().server.url, token, method, params, headers),
  };
}

export const textOf = (result: { content: unknown[] }) =>
  (result.content as { type: string; text?: string }[])
    .map((c) => (c.type === 'text' ? (c.text ?? '') : ''))
    .join('\n');

/** Call a tool that must succeed: its structured content (the text block is the same JSON). */
export async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Data> {
  const result = await client.callTool({ name, arguments: args });
  const text = textOf(result);
  expect(result.isError, `${name}: ${text}`).toBeFalsy();
  expect(JSON.parse(text)).toEqual(result.structuredContent);
  return result.structuredContent as Data;
}

/** Call a tool that must be refused with `code`: the error body. */
export async function refused(client: Client, name: string, args: Record<string, unknown>, code: string) {
  const result = await client.callTool({ name, arguments: args });
  const text = textOf(result);
  expect(result.isError, `${name}: ${text}`).toBe(true);
  const error = (result.structuredContent as Data).error as Data;
  expect(error, text).toMatchObject({ code });
  return error;
}

/** A person whose org was granted `cents` of credit (with `scopes`, or all). */
export async function creditedPerson(stack: TestStack, cents: number, scopes?: Scope[]): Promise<Person> {
  const person = await createPerson(stack.services, scopes ? { scopes } : {});
  if (cents > 0) await stack.services.ledger.post({ orgId: person.orgId, kind: 'grant', amountCents: cents });
  return person;
}

/** The org's credit once its usage is drained. */
export async function creditOf(stack: TestStack, orgId: string): Promise<number> {
  await untilUsageDrained(stack.services.spend, orgId);
  const [row] = await sql<{ credit_cents: string }>(stack.db.url, 'select credit_cents from orgs where id = $1', [
    orgId,
  ]);
  return Number(row!.credit_cents);
}

/** A hand-built 2026-07-28 POST: the `_meta` envelope (with the client's `capabilities`) and the routing headers. */
export function modernPost(
  url: string,
  token: string,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  capabilities: ClientCapabilities = {},
): Promise<Response> {
  return fetch(`${url}/mcp`, {
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

/** Give a listing required terms (a document created and activated over REST by its provider's session). */
export async function requireTerms(restUrl: string, providerSession: string, apiId: string): Promise<void> {
  const doc = await http(restUrl, 'POST', '/v1/provider/documents', {
    token: providerSession,
    body: { kind: 'terms', version: '1.0', body: '# Terms', api_id: apiId, acceptance_mode: 'required' },
  });
  expect(doc.status, show(doc)).toBe(201);
  const activated = await http(restUrl, 'POST', `/v1/provider/documents/${doc.body.data.document_id}/activate`, {
    token: providerSession,
  });
  expect(activated.status, show(activated)).toBe(200);
}

/** A raw JSON-RPC `initialize` request (the 2025 eras open a session with it), for tests below the SDK client. */
export function initializeRequest(protocolVersion: string = LEGACY, name = 't') {
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name, version: '1' } },
  };
}

/** POST that `initialize` to `{mcpUrl}/mcp` with a bearer (or none) and extra headers; the answer as http() gives it. */
export function postInitialize(
  mcpUrl: string,
  token: string | undefined,
  opts: { protocolVersion?: string; headers?: Record<string, string> } = {},
) {
  return http(mcpUrl, 'POST', '/mcp', {
    token,
    headers: { accept: 'application/json, text/event-stream', ...opts.headers },
    body: initializeRequest(opts.protocolVersion),
  });
}
