/**
 * The agent-tool server: MCP Streamable HTTP at /mcp (stateful sessions, one McpServer per session), protected
 * resource metadata at /.well-known/oauth-protected-resource, and /health. Every /mcp request needs a bearer API
 * key or an OAuth access token our authorization server issued for this resource (it acts as the key a person
 * minted when approving the client); a 401 carries WWW-Authenticate with `resource_metadata` and `scope` so
 * clients can discover how to authorise.
 * A session belongs to the key that opened it: every request re-authenticates its key (the keys service's cache is
 * invalidated over pub/sub, so a revoked key answers 401 at once and its sessions close), and a session id presented
 * with any other key is unknown (404). Sessions are bounded per org and expire when idle (mcp/sessions.ts).
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
import { isApiKeyFormat, parseBearer } from '../core/auth/bearer.js';
import { SCOPES } from '../core/auth/scopes.js';
import { AppError, NotFoundError, UnauthenticatedError, ValidationError } from '../core/errors.js';
import { hashKey } from '../core/keys/key-material.js';
import { OAuthAccessTokens } from '../core/oauth/access-tokens.js';
import type { Services } from '../core/services.js';
import { createGatewayHandler, type GatewayHandler } from '../gateway/app.js';
import { McpSessions, type McpSession } from './sessions.js';
import type { ToolContext } from './tool-context.js';
import { registerAllTools } from './tools/index.js';

export const SERVER_INFO = { name: 'svc-marketplace', version: '0.1.0' };

/** An opaque OAuth access token (oidc-provider's: base64url), as opposed to an API key or a session token. */
const OAUTH_TOKEN_RE = /^Bearer[ ]+([A-Za-z0-9_-]{32,512})\s*$/i;

const UNKNOWN_SESSION = 'Unknown or expired MCP session; start a new one with initialize.';

export interface McpSurface {
  app: Koa<AppState>;
  /** How many sessions are open (for tests and operators). */
  openSessions(): number;
  /** Close every open MCP session and stop the idle sweep (on shutdown). */
  closeSessions(): Promise<void>;
  /** closeSessions, then close the gateway machinery this app started (its sweeper, committer, upstream pools). */
  close(): Promise<void>;
}

export interface McpAppOptions {
  /**
   * The gateway call_api and run_probe go through (gateway/in-process.ts). In the all-in-one process this is the
   * gateway role's own handler; alone, the agent-tool server starts one, with its committer, reservation sweeper and
   * event subscription, exactly as a gateway process does, and closes it in close().
   */
  gateway?: GatewayHandler;
}

export function createMcpApp(services: Services, options: McpAppOptions = {}): McpSurface {
  const gateway = options.gateway ?? createGatewayHandler(services);
  const sessions = new McpSessions({
    perOrg: services.config.mcp.sessionsPerOrg,
    idleMs: services.config.mcp.sessionIdleMs,
    logger: services.logger,
  });
  sessions.start();
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

  // OAuth access tokens from our authorization server (core/oauth/), for this resource only.
  const oauthTokens = new OAuthAccessTokens(services.orm, metadata.resource);
  const challenge = `Bearer error="invalid_token", resource_metadata="${metadataUrl}", scope="${SCOPES.join(' ')}"`;

  router.all('/mcp', async (ctx) => {
    const sessionId = ctx.get('mcp-session-id');
    let token: string | undefined;
    let principal;
    try {
      const header = ctx.get('authorization') || undefined;
      const oauthToken = OAUTH_TOKEN_RE.exec(header ?? '')?.[1];
      if (oauthToken && !isApiKeyFormat(oauthToken)) {
        token = oauthToken;
        principal = (await oauthTokens.verify(oauthToken)).principal;
      } else {
        const credential = parseBearer(header);
        if (credential.type !== 'api_key') {
          throw new UnauthenticatedError('The agent-tool server accepts API keys and OAuth access tokens.');
        }
        token = credential.token;
        principal = (await services.keys.authenticate(token)).principal;
      }
    } catch (err) {
      if (err instanceof AppError && err.status === 401) {
        if (sessionId && token) closeIfKeyRevoked(sessionId, token);
        throw new UnauthenticatedError(err.message, { headers: { 'WWW-Authenticate': challenge } });
      }
      throw err;
    }
    if (principal.type !== 'api_key') throw new UnauthenticatedError('The agent-tool server accepts API keys.');

    let session: McpSession | undefined;
    if (sessionId) {
      session = sessions.get(sessionId);
      // Another key, even of the same org, must not learn that the session exists: the same 404 as unknown.
      if (!session || session.keyId !== principal.keyId) throw new NotFoundError(UNKNOWN_SESSION);
    } else {
      if (ctx.method !== 'POST' || !isInitializeRequest(ctx.request.body)) {
        throw new ValidationError('No MCP session: send an initialize request first (without Mcp-Session-Id).');
      }
      session = await openSession(principal, hashKey(token), { ip: ctx.ip, log: ctx.state.log });
    }
    session.context.principal = principal;
    session.context.ip = ctx.ip;
    session.context.log = ctx.state.log;

    const authInfo: AuthInfo = {
      token: 'redacted',
      clientId: principal.keyId,
      scopes: [...principal.scopes],
      extra: { orgId: principal.orgId },
    };
    (ctx.req as typeof ctx.req & { auth?: AuthInfo }).auth = authInfo;
    ctx.respond = false; // the transport writes the response
    const open = session;
    await sessions.use(open, ctx.method, () => open.transport.handleRequest(ctx.req, ctx.res, ctx.request.body));
    // An initialize the transport refused (bad params) leaves a session nobody can use.
    if (!sessionId && open.transport.sessionId === undefined) sessions.close(open, 'not_initialized');
  });

  /** A session whose own key stopped authenticating (revoked) is closed: the key never comes back. */
  function closeIfKeyRevoked(sessionId: string, token: string): void {
    const session = sessions.get(sessionId);
    if (session && hashKey(token) === session.keyHash) sessions.close(session, 'key_revoked');
  }

  async function openSession(
    principal: Extract<ToolContext['principal'], { type: 'api_key' }>,
    keyHash: string,
    request: Omit<ToolContext, 'principal'>,
  ): Promise<McpSession> {
    const id = randomUUID();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessionclosed: () => {
        const s = sessions.get(id);
        if (s) sessions.close(s, 'terminated');
      },
    });
    const session: McpSession = {
      id,
      transport,
      orgId: principal.orgId,
      keyId: principal.keyId,
      keyHash,
      context: { principal, ...request },
      lastSeen: Date.now(),
      busy: 0,
    };
    sessions.add(session); // may evict the org's least recently used idle session, or refuse (429)
    // logging: clients may set a level (logging/setLevel); tools only otherwise (no prompts or resources).
    const server = new McpServer(SERVER_INFO, { capabilities: { tools: {}, logging: {} } });
    registerAllTools(server, services, session.context, { gateway });
    await server.connect(transport);
    return session;
  }

  const app = createKoaApp(services, [healthRoutes(services, 'mcp'), router]);
  return {
    app,
    openSessions: () => sessions.size,
    closeSessions: () => sessions.closeAll(),
    async close() {
      await sessions.closeAll();
      if (!options.gateway) await gateway.close();
    },
  };
}
