/**
 * Catalog APIs as the agent's own tools (issue 25 item 3; docs/agent-tools.md, "Installed API tools"): how a key's
 * installed tools (core/agent-tools) reach its MCP servers in both eras.
 *
 * - `tools/list` answers the default listing (the same for everyone, mcp/tool-listing.ts) followed by the calling
 *   key's installed tools, read from Postgres and the live catalog on every list (price and caps in the description,
 *   `_meta` `svc/moves_money` / `svc/price`). In 2026-07-28, a list with installed tools is `cacheScope: private` with
 *   `ttlMs: 0`; the default list alone stays public (docs/decisions.md).
 * - `tools/call` of an installed tool checks the arguments against the tool's input schema (`validation_failed`),
 *   then is `call_api` for that listing, method and path (mcp/tools/calls.tools.ts: the gateway's one enforcement
 *   path); any other name goes to the SDK's own handler.
 * - 2025-11-25 sessions get `notifications/tools/list_changed` when their key's set changes (add/remove, on any
 *   instance: published on `mcp:tools-changed`) or a listing it installed from changes (reprice, unpublish, endpoint
 *   edits: the gateways' `gateway:listing-changed`).
 *
 * Both hooks go through the SDK's public `setRequestHandler`: the wrapper installed by `withInstalledTools` sees the
 * handlers the McpServer (and mcp/server.ts) set for `tools/list` and `tools/call`, and wraps them.
 */
import { TOOLS_CHANGED_CHANNEL } from '../core/agent-tools/installed-tools.service.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { getLiteralValue, getObjectShape } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { InstalledToolsService, type LiveInstalledTool } from '../core/agent-tools/installed-tools.service.js';
import { toolRequest, type ToolRequest } from '../core/agent-tools/tool-args.js';
import type { Unsubscribe } from '../core/counters/index.js';
import { GATEWAY_CHANNELS } from '../core/spend/gateway-events.js';
import type { Services } from '../platform/services.js';
import type { ToolContext, ToolRuntime } from './tool-context.js';
import { unknownArgumentResult } from './argument-check.js';
import { describeInstalled } from './installed-tool-definition.js';
import { withPersonSteps, type StepSource } from './elicitation.js';
import { callSteps, refusalStep } from './person-steps.js';
import { callThroughGateway, queryOf } from './tools/calls.tools.js';
import { keyPrincipal } from './tools/keys.tools.js';
import { toolError } from './tools/tool-result.js';

interface PerProcess {
  service: InstalledToolsService;
  /** Live 2025-11-25 servers of this process, by key. */
  servers: Map<string, Set<McpServer>>;
  subscription?: Promise<Unsubscribe | undefined>;
}

const processes = new WeakMap<Services, PerProcess>();

function perProcess(services: Services): PerProcess {
  let state = processes.get(services);
  if (!state) {
    state = { service: new InstalledToolsService(services), servers: new Map() };
    processes.set(services, state);
  }
  return state;
}

export function installedTools(services: Services): InstalledToolsService {
  return perProcess(services).service;
}

/** Send `notifications/tools/list_changed` to this process's live sessions of the key. */
function notifyLocal(services: Services, keyId: string): void {
  for (const server of perProcess(services).servers.get(keyId) ?? []) {
    server.sendToolListChanged();
  }
}

function subscribe(services: Services): Promise<Unsubscribe | undefined> {
  const { counters, logger } = services;
  const onListing = (slug: string) => {
    installedTools(services)
      .keysWith(slug)
      .then((keys) => keys.forEach((k) => notifyLocal(services, k)))
      .catch((err: unknown) => logger.warn({ err, slug }, 'could not tell sessions about a changed listing'));
  };
  return Promise.all([
    counters.subscribe(TOOLS_CHANGED_CHANNEL, (keyId) => notifyLocal(services, keyId)),
    counters.subscribe(GATEWAY_CHANNELS.listing, onListing),
  ])
    .then((off) => async () => void (await Promise.all(off.map((u) => u()))))
    .catch((err: unknown) => {
      logger.warn({ err }, 'could not subscribe to tool-list changes; sessions see them at their next tools/list');
      return undefined;
    });
}

/** Tell every session of the key, on every instance, that its tool list changed. Never fails the caller. */
export async function announceToolsChanged(services: Services, keyId: string): Promise<void> {
  try {
    await services.counters.publish(TOOLS_CHANGED_CHANNEL, keyId);
  } catch (err) {
    services.logger.warn({ err, key_id: keyId }, 'could not publish a tool-list change; telling local sessions');
    notifyLocal(services, keyId);
  }
}

/** Track a 2025-11-25 session's server, so it is told of its key's tool-list changes until it closes. */
export function trackSession(server: McpServer, services: Services, keyId: string): void {
  const state = perProcess(services);
  state.subscription ??= subscribe(services);
  const set = state.servers.get(keyId) ?? new Set();
  state.servers.set(keyId, set.add(server));
  const previous = server.server.onclose;
  server.server.onclose = () => {
    set.delete(server);
    if (set.size === 0 && state.servers.get(keyId) === set) state.servers.delete(keyId);
    previous?.();
  };
}

/** Stop listening for tool-list changes (the agent-tool server's shutdown). */
export async function stopToolListEvents(services: Services): Promise<void> {
  const state = processes.get(services);
  const subscription = state?.subscription;
  if (state) state.subscription = undefined;
  await (
    await subscription
  )?.();
}

type Args = Record<string, unknown>;

/** The path after the listing's base, with the path parameters filled in and, for a body method, the query. */
function endpointOf(tool: LiveInstalledTool, request: ToolRequest, queryMethod: boolean): string {
  const filled = tool.endpoint.path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) =>
    encodeURIComponent(String(request.path[name])),
  );
  if (queryMethod || request.query === undefined) return filled;
  const query = queryOf(request.query).toString();
  return query ? `${filled}?${query}` : filled;
}

/** The call_api request an installed tool's arguments make (the listing, method, filled path, input, key). */
function gatewayRequest(tool: LiveInstalledTool, args: Args) {
  const request = toolRequest(tool.input, args);
  const method = tool.endpoint.method;
  const queryMethod = method === 'GET' || method === 'HEAD';
  return {
    slug: tool.api.slug,
    endpoint: endpointOf(tool, request, queryMethod),
    method,
    input: queryMethod ? request.query : request.body,
    ...(request.idempotency_key !== undefined ? { idempotency_key: request.idempotency_key } : {}),
  };
}

/**
 * An installed tool's person's steps (approval of spend, required terms) are call_api's (mcp/person-steps.ts), asked
 * as URL elicitations the same way: done when the quote for the same request admits it; the rerun carries the
 * agent's idempotency key or one of the flow.
 */
function installedSteps(services: Services, ctx: ToolContext, name: string): StepSource<Args> {
  const calls = callSteps(services, ctx);
  return {
    find: (result) => refusalStep(result),
    again: <T extends Args>(args: T, flowId: string): T =>
      typeof args.idempotency_key === 'string' ? args : { ...args, idempotency_key: `person-step:${flowId}` },
    async done(step, args) {
      const tool = await installedTools(services).find(keyPrincipal(ctx).keyId, name);
      let request;
      try {
        request = tool && gatewayRequest(tool, args);
      } catch {
        return true; // the endpoint's schema changed meanwhile: the rerun answers why the arguments no longer fit
      }
      return !request || calls.done(step, request);
    },
  };
}

/** Call an installed tool of the context's key; undefined when the key has no live tool of that name. */
export async function callInstalled(
  services: Services,
  runtime: ToolRuntime,
  ctx: ToolContext,
  name: string,
  raw: unknown,
): Promise<CallToolResult | undefined> {
  let tool: LiveInstalledTool | undefined;
  try {
    tool = await installedTools(services).find(keyPrincipal(ctx).keyId, name);
    if (!tool) return undefined;
    return await callThroughGateway(services, runtime, ctx, gatewayRequest(tool, (raw ?? {}) as Args));
  } catch (err) {
    if (!tool) throw err;
    return toolError(err, ctx.log);
  }
}

type Handler = (request: { params?: { name?: string; arguments?: unknown } }, extra: unknown) => unknown;
type Protocol = { setRequestHandler: (method: unknown, handler: Handler) => void };

/** `tools/list` or `tools/call` for a v1 (zod schema) or v2 (method string) `setRequestHandler` registration. */
function methodOf(target: unknown): string | undefined {
  if (typeof target === 'string') return target;
  const method = getObjectShape(target as Parameters<typeof getObjectShape>[0])?.method;
  const value = method ? getLiteralValue(method) : undefined;
  return typeof value === 'string' ? value : undefined;
}

/**
 * Wrap the `tools/list` and `tools/call` handlers that will be set on `protocol` (v1 `server.server` or v2
 * `server.server`), so the context's key sees and calls its installed tools. `cacheFields`: add the 2026-07-28
 * cache fields to a list that carries installed tools. `defaults`: the default listing, whose tools' unknown
 * arguments are refused with the argument meant (mcp/argument-check.ts) before the SDK's handler runs.
 */
export function withInstalledTools(
  protocol: Protocol,
  services: Services,
  ctx: ToolContext,
  runtime: ToolRuntime,
  cacheFields: boolean,
  defaults: () => readonly Tool[],
): void {
  const set = protocol.setRequestHandler.bind(protocol);
  protocol.setRequestHandler = (target, handler) => {
    const method = methodOf(target);
    if (method === 'tools/list') {
      return set(target, async (request, extra) => {
        const listed = (await handler(request, extra)) as { tools: unknown[] };
        const mine = await installedDefinitions(services, ctx);
        if (mine.length === 0) return listed;
        return { ...listed, tools: [...listed.tools, ...mine], ...(cacheFields ? PRIVATE_LIST : {}) };
      });
    }
    if (method === 'tools/call') {
      return set(target, async (request, extra) => {
        const name = request.params?.name ?? '';
        // Installed tools are named `<slug>__<operation>`; no default tool has `__` in its name.
        if (!name.includes('__')) {
          return unknownArgumentResult(defaults(), name, request.params?.arguments, ctx.log) ?? handler(request, extra);
        }
        let unknown = false;
        const run = async (args: Args): Promise<CallToolResult> => {
          const result = await callInstalled(services, runtime, ctx, name, args);
          unknown = result === undefined;
          return result ?? { content: [] };
        };
        // A person's step on the way (approval, terms) is a URL elicitation, as for call_api (mcp/elicitation.ts).
        const host = { server: protocol } as unknown as McpServer;
        const call = withPersonSteps(host, name, services, ctx, installedSteps(services, ctx, name), run);
        const result = await call((request.params?.arguments ?? {}) as Args, extra);
        return unknown ? handler(request, extra) : result;
      });
    }
    return set(target, handler);
  };
}

/** A list with a key's installed tools: for that key only, and stale as soon as the key's set or a price changes. */
const PRIVATE_LIST = { ttlMs: 0, cacheScope: 'private' } as const;

/** The key's installed tools as `tools/list` entries (listed whatever the scopes: a call checks `proxy:call`). */
async function installedDefinitions(services: Services, ctx: ToolContext) {
  const principal = keyPrincipal(ctx);
  const tools = await installedTools(services).live(principal.keyId);
  if (tools.length === 0) return [];
  const key = await services.keyAdmin.get(principal, principal.keyId);
  return tools.map((tool) => describeInstalled(tool, key));
}
