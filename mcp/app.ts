/**
 * The agent-tool server: MCP Streamable HTTP at /mcp, two protocol revisions chosen per request by the SDK's own rule
 * (mcp/modern.ts): 2026-07-28 stateless (a v2 McpServer per request), and 2025-11-25 in stateful sessions stored in
 * Postgres (one v1 McpServer per live session), protected resource metadata at /.well-known/oauth-protected-resource, and /health. Every /mcp request
 * must come from an allowed Origin and Host (mcp/request-guard.ts) and carry a bearer API key or an OAuth access
 * token our authorization server issued for this resource (it acts as the key a person minted when approving the
 * client); a 401 carries WWW-Authenticate with `resource_metadata` and `scope` so clients can discover how to
 * authorise.
 * A session belongs to the key that opened it: every request re-authenticates its key (the keys service's cache is
 * invalidated over pub/sub, so a revoked key answers 401 at once; revoking ends its sessions) and re-reads the stored
 * session, and a session id presented with any other key is unknown (404). Sessions survive restarts, work on every
 * instance, are capped per org and expire after 30 days idle (mcp/sessions.ts, docs/agent-sessions.md).
 */
import { untilUsageDrained } from '../core/spend/usage-barrier.js';
import Router from '@koa/router';
import { InitializeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type Koa from 'koa';
import { createKoaApp } from '../api/app.js';
import type { AppState } from '../api/context.js';
import { healthRoutes } from '../api/routes/health.routes.js';
import { SCOPES } from '../core/auth/scopes.js';
import { NotFoundError, ValidationError } from '../core/errors.js';
import { McpSessionStore } from '../core/sessions/mcp-session-store.js';
import type { Services } from '../platform/services.js';
import { createGatewayHandler, type GatewayHandler } from '../gateway/app.js';
import type { InProcessGateway } from '../gateway/in-process.js';
import { mcpAuthenticator } from './auth.js';
import { stopToolListEvents } from './installed-tools.js';
import { requestGuard } from './request-guard.js';
import { authInfoOf, createModernEndpoint, isModernRequest, routingHeaders } from './modern.js';
import { countRequest, routeOfBody } from './metrics.js';
import { buildMcpServer, toolNames } from './server.js';
import { negotiatedVersion, type SessionHandshake } from './session-transport.js';
import { McpSessions, type LiveSession } from './sessions.js';
import type { ToolContext, ToolRuntime } from './tool-context.js';
import { toWebRequest, writeWebResponse } from './web-bridge.js';

export { SERVER_INFO } from './server.js';

/** The stateless revision served beside the 2025-11-25 sessions. */
const MODERN_VERSION = '2026-07-28';
const LEGACY_VERSION = '2025-11-25';
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
  /** closeSessions, then close the gateway machinery this app started (its sweeper, committer, upstream pools). */
  close(): Promise<void>;
}

export interface McpAppOptions {
  /**
   * The gateway call_api and run_probe go through (gateway/in-process.ts). In the all-in-one process this is the
   * gateway thread (gateway/thread.ts) or a gateway role's handler; alone, the agent-tool server
   * starts one, with its committer, reservation sweeper and event subscription, exactly as a gateway process does,
   * and closes it in close().
   */
  gateway?: InProcessGateway;
}

export function createMcpApp(services: Services, options: McpAppOptions = {}): McpSurface {
  const { config } = services;
  const own: GatewayHandler | undefined = options.gateway ? undefined : createGatewayHandler(services);
  const gateway: InProcessGateway = options.gateway ?? own!;
  const endpoint = `${config.urls.mcp}/mcp`;
  const metadataUrl = `${config.urls.mcp}/.well-known/oauth-protected-resource`;
  const sessions = createSessions(services, endpoint, gateway);
  const runtime = { gateway };
  const modern = createModernEndpoint(services, runtime);
  const authenticate = mcpAuthenticator(services, { resource: endpoint, metadata: metadataUrl }, (id) =>
    sessions.afterUnauthenticated(id),
  );

  const router = new Router<AppState>();
  const metadata = resourceMetadata(config.urls.publicBase, endpoint);
  router.get(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'], (ctx) => {
    ctx.body = metadata; // RFC 9728 document: plain JSON, not the envelope
  });

  const deps: McpRouteDeps = { services, endpoint, runtime, modern, sessions, authenticate };
  router.all('/mcp', requestGuard(config), async (ctx) => {
    const parsedBody: unknown = ctx.method === 'POST' ? ctx.request.body : undefined;
    const request = toWebRequest(ctx, endpoint);
    if (await isModernRequest(request, parsedBody)) await serveModern(ctx, deps, request, parsedBody);
    else await serveLegacy(ctx, deps, parsedBody);
  });

  const app = createKoaApp(services, [healthRoutes(services, 'mcp'), router], 'mcp');
  return {
    app,
    openSessions: () => sessions.size,
    closeSessions: () => sessions.closeAll(),
    async close() {
      await sessions.closeAll();
      await stopToolListEvents(services);
      await modern.close();
      await own?.close();
    },
  };
}

/** What the `/mcp` route's two eras share: the services, the endpoint, the gateway, both servers, the authenticator. */
interface McpRouteDeps {
  services: Services;
  endpoint: string;
  runtime: ToolRuntime;
  modern: ReturnType<typeof createModernEndpoint>;
  sessions: McpSessions;
  authenticate: ReturnType<typeof mcpAuthenticator>;
}

/** 2026-07-28: no session; every request carries its key, its version and its capabilities (mcp/modern.ts). */
async function serveModern(
  ctx: Koa.ParameterizedContext<AppState>,
  { services, runtime, modern, authenticate }: McpRouteDeps,
  request: Request,
  parsedBody: unknown,
): Promise<void> {
  const principal = await authenticate(ctx);
  await untilUsageDrained(services.spend, principal.orgId);
  const { method, name } = routingHeaders(request);
  const log = ctx.state.log.child({ mcp_era: MODERN_VERSION, mcp_method: method, mcp_name: name });
  const context: ToolContext = { principal, ip: ctx.ip, log };
  const response = await modern.serve(request, parsedBody, context);
  await writeWebResponse(ctx, response);
  countRequest(services, MODERN_VERSION, { method, name }, toolNames(services, context, runtime), response.status);
}

/** 2025-11-25: a session opened by `initialize` (no session id) or resumed by its id, on any instance. */
async function serveLegacy(
  ctx: Koa.ParameterizedContext<AppState>,
  deps: McpRouteDeps,
  parsedBody: unknown,
): Promise<void> {
  const { services, endpoint, runtime, sessions, authenticate } = deps;
  const countLegacy = (status: number, context: ToolContext) =>
    countRequest(services, LEGACY_VERSION, routeOfBody(parsedBody), toolNames(services, context, runtime), status);
  const sessionId = ctx.get('mcp-session-id') || undefined;
  const principal = await authenticate(ctx, sessionId);
  await untilUsageDrained(services.spend, principal.orgId);
  const context: ToolContext = { principal, ip: ctx.ip, log: ctx.state.log };
  if (!sessionId) {
    if (ctx.method !== 'POST') throw noSession();
    await sessions.open(principal, handshakeOf(ctx.request.body), context, (session) => serve(ctx, session, endpoint));
    countLegacy(ctx.res.statusCode, context);
    return;
  }
  const session =
    sessionId.length <= MAX_SESSION_ID_LENGTH
      ? await sessions.resume(sessionId, ctx.method, principal, context)
      : undefined;
  // Another key, even of the same org, must not learn that the session exists: the same 404 as unknown.
  if (!session) throw new NotFoundError(UNKNOWN_SESSION);
  Object.assign(session.context, context); // tools see this request's key (its current scopes) and address
  await sessions.run(session, ctx.method, () => serve(ctx, session, endpoint));
  countLegacy(ctx.res.statusCode, context);
}

function createSessions(services: Services, endpoint: string, gateway: InProcessGateway): McpSessions {
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
    buildServer: (context) => buildMcpServer(services, context, { gateway }),
  });
  sessions.start();
  return sessions;
}

/** Hand the request to the session's transport and write what it answers. */
async function serve(ctx: Koa.ParameterizedContext<AppState>, session: LiveSession, endpoint: string): Promise<void> {
  const authInfo = authInfoOf(session.context.principal);
  const parsedBody: unknown = ctx.method === 'POST' ? ctx.request.body : undefined;
  const response = await session.transport.handleRequest(toWebRequest(ctx, endpoint), { authInfo, parsedBody });
  await writeWebResponse(ctx, response);
}

/** RFC 9728 protected-resource metadata: where to get a token for this resource. */
function resourceMetadata(authorizationServer: string, resource: string) {
  return {
    resource,
    authorization_servers: [authorizationServer],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'API marketplace agent tools',
  };
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
