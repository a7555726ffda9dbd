/**
 * The agent-tool server: MCP Streamable HTTP at /mcp (stateful sessions, one McpServer per session), protected
 * resource metadata at /.well-known/oauth-protected-resource, and /health. Every /mcp request needs a bearer API
 * key; a 401 carries WWW-Authenticate with `resource_metadata` so clients can discover how to authorise.
 * Sessions are bound to the org that opened them and live in this process's memory for now.
 */
import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type Koa from 'koa';
import { createKoaApp } from '../api/app.js';
import type { AppState } from '../api/context.js';
import { healthRoutes } from '../api/routes/health.routes.js';
import { parseBearer } from '../core/auth/bearer.js';
import { SCOPES } from '../core/auth/scopes.js';
import { AppError, NotFoundError, UnauthenticatedError, ValidationError } from '../core/errors.js';
import type { Services } from '../core/services.js';
import { registerAccountTools } from './tools/accounts.tools.js';

export const SERVER_INFO = { name: 'svc-marketplace', version: '0.1.0' };

interface Session {
  transport: StreamableHTTPServerTransport;
  orgId: string;
}

export interface McpSurface {
  app: Koa<AppState>;
  /** Close every open MCP session (on shutdown). */
  closeSessions(): Promise<void>;
}

export function createMcpApp(services: Services): McpSurface {
  const sessions = new Map<string, Session>();
  const mcpUrl = services.config.urls.mcp;
  const metadataUrl = `${mcpUrl}/.well-known/oauth-protected-resource`;

  const router = new Router<AppState>();
  const metadata = {
    resource: `${mcpUrl}/mcp`,
    authorization_servers: [services.config.urls.publicBase],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'API marketplace agent tools',
  };
  router.get(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'], (ctx) => {
    ctx.body = metadata; // RFC 9728 document: plain JSON, not the envelope
  });

  router.all('/mcp', async (ctx) => {
    let principal;
    try {
      const credential = parseBearer(ctx.get('authorization') || undefined);
      if (credential.type !== 'api_key') throw new UnauthenticatedError('The agent-tool server accepts API keys.');
      principal = (await services.keys.authenticate(credential.token)).principal;
    } catch (err) {
      if (err instanceof AppError && err.status === 401) {
        throw new UnauthenticatedError(err.message, {
          headers: { 'WWW-Authenticate': `Bearer error="invalid_token", resource_metadata="${metadataUrl}"` },
        });
      }
      throw err;
    }

    const sessionId = ctx.get('mcp-session-id');
    let session = sessionId ? sessions.get(sessionId) : undefined;
    if (sessionId && (!session || session.orgId !== principal.orgId)) {
      throw new NotFoundError('Unknown or expired MCP session; start a new one with initialize.');
    }
    if (!session) {
      if (ctx.method !== 'POST' || !isInitializeRequest(ctx.request.body)) {
        throw new ValidationError('No MCP session: send an initialize request first (without Mcp-Session-Id).');
      }
      const orgId = principal.orgId;
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, { transport, orgId });
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} } });
      registerAccountTools(server, services, { principal, ip: ctx.ip, log: ctx.state.log });
      await server.connect(transport);
      session = { transport, orgId };
    }

    const authInfo: AuthInfo = {
      token: 'redacted',
      clientId: principal.type === 'api_key' ? principal.keyId : principal.sessionId,
      scopes: [...principal.scopes],
      extra: { orgId: principal.orgId },
    };
    (ctx.req as typeof ctx.req & { auth?: AuthInfo }).auth = authInfo;
    ctx.respond = false; // the transport writes the response
    await session.transport.handleRequest(ctx.req, ctx.res, ctx.request.body);
  });

  const app = createKoaApp(services, [healthRoutes(services, 'mcp'), router]);
  return {
    app,
    async closeSessions() {
      await Promise.allSettled([...sessions.values()].map((s) => s.transport.close()));
      sessions.clear();
    },
  };
}
