/**
 * The agent-tool server: MCP Streamable HTTP at /mcp (stateful sessions stored in Postgres, one McpServer per live
 * session), protected resource metadata at /.well-known/oauth-protected-resource, and /health. Every /mcp request
 * must come from an allowed Origin and Host (mcp/request-guard.ts) and carry a bearer API key or an OAuth access
 * token our authorization server issued for this resource (it acts as the key a person minted when approving the
 * client); a 401 carries WWW-Authenticate with `resource_metadata` and `scope` so clients can discover how to
 * authorise.
 * A session belongs to the key that opened it: every request re-authenticates its key (the keys service's cache is
 * invalidated over pub/sub, so a revoked key answers 401 at once; revoking ends its sessions) and re-reads the stored
 * session, and a session id presented with any other key is unknown (404). Sessions survive restarts, work on every
 * instance, are capped per org and expire after 30 days idle (mcp/sessions.ts, docs/agent-sessions.md).
 */
import Router from '@koa/router';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { InitializeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type Koa from 'koa';
import { createKoaApp } from '../api/app.js';
import type { AppState } from '../api/context.js';
import { healthRoutes } from '../api/routes/health.routes.js';
import { isApiKeyFormat, parseBearer } from '../core/auth/bearer.js';
import { SCOPES } from '../core/auth/scopes.js';
import { AppError, NotFoundError, UnauthenticatedError, ValidationError } from '../core/errors.js';
import { McpSessionStore } from '../core/mcp-sessions/mcp-session-store.js';
import { OAuthAccessTokens } from '../core/oauth/access-tokens.js';
import type { Services } from '../core/services.js';
import { requestGuard } from './request-guard.js';
import { buildMcpServer } from './server.js';
import { negotiatedVersion, type SessionHandshake } from './session-transport.js';
import { McpSessions, type KeyPrincipal, type LiveSession } from './sessions.js';
import type { ToolContext } from './tool-context.js';
import { toWebRequest, writeWebResponse } from './web-bridge.js';

export { SERVER_INFO } from './server.js';

/** An opaque OAuth access token (oidc-provider's: base64url), as opposed to an API key or a session token. */
const OAUTH_TOKEN_RE = /^Bearer[ ]+([A-Za-z0-9_-]{32,512})\s*$/i;

const UNKNOWN_SESSION = 'Unknown or expired MCP session; start a new one with initialize.';
/** A session id longer than this is not one of ours (ours are UUIDs): unknown without a lookup. */
const MAX_SESSION_ID_LENGTH = 128;
/** What a client's `initialize` may ask us to store (client info and capabilities, as JSON). */
const MAX_HANDSHAKE_BYTES = 16 * 1024;

export interface McpSurface {
  app: Koa<AppState>;
  /** How many sessions this process holds live (the stored ones may be more: any instance can serve those). */
  openSessions(): number;
  /** Close every live session and stop the sweep (on shutdown); stored sessions stay for the next process. */
  closeSessions(): Promise<void>;
}

export function createMcpApp(services: Services): McpSurface {
  const { config } = services;
  const endpoint = `${config.urls.mcp}/mcp`;
  const metadataUrl = `${config.urls.mcp}/.well-known/oauth-protected-resource`;
  const sessions = createSessions(services, endpoint);
  const oauthTokens = new OAuthAccessTokens(services.orm, endpoint); // tokens for this resource only
  const challenge = `Bearer error="invalid_token", resource_metadata="${metadataUrl}", scope="${SCOPES.join(' ')}"`;

  const router = new Router<AppState>();
  const metadata = {
    resource: endpoint,
    authorization_servers: [config.urls.publicBase],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'API marketplace agent tools',
  };
  router.get(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'], (ctx) => {
    ctx.body = metadata; // RFC 9728 document: plain JSON, not the envelope
  });

  /** The request's key, or 401 with the challenge (and a revoked key's session ends). */
  async function authenticate(ctx: Koa.ParameterizedContext<AppState>, sessionId?: string): Promise<KeyPrincipal> {
    let token: string | undefined;
    try {
      const header = ctx.get('authorization') || undefined;
      const oauthToken = OAUTH_TOKEN_RE.exec(header ?? '')?.[1];
      if (oauthToken && !isApiKeyFormat(oauthToken)) {
        token = oauthToken;
        return (await oauthTokens.verify(oauthToken)).principal;
      }
      const credential = parseBearer(header);
      if (credential.type !== 'api_key') {
        throw new UnauthenticatedError('The agent-tool server accepts API keys and OAuth access tokens.');
      }
      token = credential.token;
      const { principal } = await services.keys.authenticate(token);
      if (principal.type !== 'api_key') throw new UnauthenticatedError('The agent-tool server accepts API keys.');
      return principal;
    } catch (err) {
      if (err instanceof AppError && err.status === 401) {
        if (sessionId && token) await sessions.afterUnauthenticated(sessionId);
        throw new UnauthenticatedError(err.message, { headers: { 'WWW-Authenticate': challenge } });
      }
      throw err;
    }
  }

  /** Hand the request to the session's transport and write what it answers. */
  async function serve(ctx: Koa.ParameterizedContext<AppState>, session: LiveSession): Promise<void> {
    const principal = session.context.principal;
    const authInfo: AuthInfo = {
      token: 'redacted',
      clientId: principal.type === 'api_key' ? principal.keyId : principal.orgId,
      scopes: [...principal.scopes],
      extra: { orgId: principal.orgId },
    };
    const parsedBody: unknown = ctx.method === 'POST' ? ctx.request.body : undefined;
    const response = await session.transport.handleRequest(toWebRequest(ctx, endpoint), { authInfo, parsedBody });
    await writeWebResponse(ctx, response);
  }

  router.all('/mcp', requestGuard(config), async (ctx) => {
    const sessionId = ctx.get('mcp-session-id') || undefined;
    const principal = await authenticate(ctx, sessionId);
    const context: ToolContext = { principal, ip: ctx.ip, log: ctx.state.log };
    if (!sessionId) {
      if (ctx.method !== 'POST') throw noSession();
      await sessions.open(principal, handshakeOf(ctx.request.body), context, (session) => serve(ctx, session));
      return;
    }
    const session =
      sessionId.length <= MAX_SESSION_ID_LENGTH
        ? await sessions.resume(sessionId, ctx.method, principal, context)
        : undefined;
    // Another key, even of the same org, must not learn that the session exists: the same 404 as unknown.
    if (!session) throw new NotFoundError(UNKNOWN_SESSION);
    Object.assign(session.context, context); // tools see this request's key (its current scopes) and address
    await sessions.run(session, ctx.method, () => serve(ctx, session));
  });

  const app = createKoaApp(services, [healthRoutes(services, 'mcp'), router]);
  return {
    app,
    openSessions: () => sessions.size,
    closeSessions: () => sessions.closeAll(),
  };
}

function createSessions(services: Services, endpoint: string): McpSessions {
  const { mcp } = services.config;
  const store = new McpSessionStore(services.orm, {
    perOrg: mcp.sessionsPerOrg,
    idleMs: mcp.sessionIdleMs,
    touchMs: mcp.sessionTouchMs,
    clock: services.clock,
  });
  const sessions = new McpSessions({
    store,
    clock: services.clock,
    logger: services.logger,
    cacheMax: mcp.cacheMax,
    cacheIdleMs: mcp.cacheIdleMs,
    // Every quarter of the shorter limit, at most once a minute.
    sweepMs: Math.min(60_000, Math.max(50, Math.floor(Math.min(mcp.sessionIdleMs, mcp.cacheIdleMs) / 4))),
    endpoint,
    buildServer: (context) => buildMcpServer(services, context),
  });
  sessions.start();
  return sessions;
}

function noSession(): ValidationError {
  return new ValidationError('No MCP session: send an initialize request first (without Mcp-Session-Id).');
}

/** What a session's `initialize` stores: the version the server answers with, the client's info and capabilities. */
function handshakeOf(body: unknown): Omit<SessionHandshake, 'id'> {
  const parsed = InitializeRequestSchema.safeParse(body);
  if (!parsed.success) throw noSession();
  const { protocolVersion, clientInfo, capabilities } = parsed.data.params;
  if (JSON.stringify([clientInfo, capabilities]).length > MAX_HANDSHAKE_BYTES) {
    throw new ValidationError(
      `The initialize request's clientInfo and capabilities exceed ${MAX_HANDSHAKE_BYTES} bytes.`,
    );
  }
  return {
    protocolVersion: negotiatedVersion(protocolVersion),
    clientInfo,
    clientCapabilities: capabilities,
  };
}
