/**
 * The agent-tool server of a stack served on loopback, and the listings the MCP tests call through it: a quotes
 * market with the provider's credential and a listing with required terms. Each test file still says its slugs,
 * secrets and extra endpoints.
 */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createMcpApp, type McpSurface } from '../../mcp/app.js';
import type { RunningHttpServer } from '../../platform/runtime/http-server.js';
import type { Services } from '../../platform/services.js';
import type { Person } from './accounts.js';
import { serve } from './http.js';
import { createLiveApi, type LiveApi } from './listings.js';
import { requireTerms } from './mcp-eras.js';
import type { TestStack } from './services.js';

/** One instance of the agent-tool server on a stack. */
export interface Surface {
  stack: TestStack;
  mcp: McpSurface;
  server: RunningHttpServer;
}

export async function surface(stack: TestStack): Promise<Surface> {
  const mcp = createMcpApp(stack.services);
  return { stack, mcp, server: await serve(mcp.app.callback()) };
}

/** The agent-tool server of `services` on loopback, with the clients the tests connect (closed first, on close). */
export interface ServedMcp {
  mcp: McpSurface;
  server: RunningHttpServer;
  clients: { close: () => Promise<void> }[];
  close(): Promise<void>;
}

export async function serveMcp(services: Services): Promise<ServedMcp> {
  const mcp = createMcpApp(services);
  const server = await serve(mcp.app.callback());
  const clients: ServedMcp['clients'] = [];
  return {
    mcp,
    server,
    clients,
    async close() {
      for (const c of clients) await c.close().catch(() => undefined);
      await mcp.close();
      await server.close();
    },
  };
}

/** The HTTP status a (v1 SDK) client call failed with, or 'ok'. */
export async function statusOf(call: Promise<unknown>): Promise<number | 'ok'> {
  try {
    await call;
    return 'ok';
  } catch (err) {
    if (err instanceof StreamableHTTPError) return err.code ?? -1;
    throw err;
  }
}

type Endpoint = { method: string; path: string; priceCents: number };

/** The quotes pair: GET /quotes/{symbol} free, GET /paid/{symbol} 5 cents. */
export const QUOTE_ENDPOINTS: Endpoint[] = [
  { method: 'GET', path: '/quotes/{symbol}', priceCents: 0 },
  { method: 'GET', path: '/paid/{symbol}', priceCents: 5 },
];

/** A live listing of `provider` whose upstream wants the bearer `secret`; its endpoints default to the quotes pair. */
export function createCredentialedApi(
  services: Pick<Services, 'orm' | 'secrets'>,
  input: { provider: Person; baseUrl: string; secret: string; slug?: string; endpoints?: Endpoint[] },
): Promise<LiveApi> {
  return createLiveApi(services, {
    providerOrgId: input.provider.orgId,
    baseUrl: input.baseUrl,
    ...(input.slug ? { slug: input.slug } : {}),
    credential: { secret: input.secret, injection: 'bearer' },
    endpoints: input.endpoints ?? QUOTE_ENDPOINTS,
  });
}

/** A live listing of `provider` (one free GET /free) whose terms must be accepted first, set over REST at `restUrl`. */
export async function createTermsApi(
  services: Pick<Services, 'orm' | 'secrets'>,
  input: { provider: Person; baseUrl: string; secret: string; restUrl: string },
): Promise<LiveApi> {
  const termsApi = await createCredentialedApi(services, {
    ...input,
    endpoints: [{ method: 'GET', path: '/free', priceCents: 0 }],
  });
  await requireTerms(input.restUrl, input.provider.session, termsApi.apiId);
  return termsApi;
}
