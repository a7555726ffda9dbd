/**
 * MCP 2026-07-28 at `{mcp_url}/mcp`, beside the 2025-11-25 sessions on the same URL (docs/decisions.md, "Both MCP
 * revisions at one endpoint"). The era of a request is the SDK's own decision: `isLegacyRequest` is the exact
 * classification `createMcpHandler` runs (a request carrying the per-request `_meta` protocol-version claim, or a
 * modern `MCP-Protocol-Version` header, is 2026-07-28; everything else, `initialize` and `Mcp-Session-Id` traffic
 * included, is 2025). 2026-07-28 requests are stateless: each is authenticated on its own (the same bearer rules,
 * 401 and `WWW-Authenticate` as a session's), and served by a fresh v2 McpServer built for that request's key, through
 * the SDK's strict modern handler (`legacy: 'reject'`: 2025 traffic never reaches it; ours goes to mcp/sessions.ts).
 *
 * The SDK checks the `Mcp-Method` / `Mcp-Name` headers against the body (a mismatch is answered `-32020` before any
 * handler runs) from the body Koa parsed once (`parsedBody`); we take the method and tool name from those headers for
 * the request log, so nothing parses the body twice.
 */
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { createMcpHandler, isLegacyRequest, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { Services } from '../platform/services.js';
import { buildModernMcpServer } from './server.js';
import type { ToolContext, ToolRuntime } from './tool-context.js';

/** Where the request's ToolContext rides from our route to the SDK's per-request server factory. */
const TOOL_CONTEXT = 'svc/tool_context';

/** The SDK's era decision for a request whose body Koa already parsed (undefined for GET and DELETE). */
export function isModernRequest(request: Request, parsedBody: unknown): Promise<boolean> {
  return isLegacyRequest(request, parsedBody).then((legacy) => !legacy);
}

/** What `Mcp-Method` and `Mcp-Name` say (the SDK refuses the request when they disagree with its body). */
export function routingHeaders(request: Request): { method?: string; name?: string } {
  return {
    method: request.headers.get('mcp-method') ?? undefined,
    name: request.headers.get('mcp-name') ?? undefined,
  };
}

/** The AuthInfo handed to the SDK for a key (the token itself never leaves mcp/auth.ts). */
export function authInfoOf(principal: ToolContext['principal']): AuthInfo {
  return {
    token: 'redacted',
    clientId: principal.type === 'api_key' ? principal.keyId : principal.orgId,
    scopes: [...principal.scopes],
    extra: { orgId: principal.orgId },
  };
}

export interface ModernEndpoint {
  /** Serve one 2026-07-28 request for an authenticated key. */
  serve(request: Request, parsedBody: unknown, context: ToolContext): Promise<Response>;
  close(): Promise<void>;
}

export function createModernEndpoint(services: Services, runtime: ToolRuntime): ModernEndpoint {
  const handler: McpHttpHandler = createMcpHandler(
    ({ authInfo }) => {
      const context = authInfo?.extra?.[TOOL_CONTEXT] as ToolContext | undefined;
      // Unreachable: serve() always passes it. A server without a principal must never be built.
      if (!context) throw new Error('2026-07-28 request without an authenticated tool context');
      return buildModernMcpServer(services, context, runtime);
    },
    {
      legacy: 'reject',
      onerror: (err) => services.logger.debug({ err }, 'mcp 2026-07-28 request refused'),
    },
  );
  return {
    serve(request, parsedBody, context) {
      const base = authInfoOf(context.principal);
      const authInfo: AuthInfo = { ...base, extra: { ...base.extra, [TOOL_CONTEXT]: context } };
      return handler.fetch(request, { authInfo, parsedBody });
    },
    close: () => handler.close(),
  };
}
