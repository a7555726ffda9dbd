/**
 * `mcp_requests_total{era, method, tool, status}`: the agent-tool server's requests by protocol revision, MCP method,
 * tool (tools/call only) and HTTP status. In 2026-07-28 the method and tool come from the `Mcp-Method` / `Mcp-Name`
 * headers (the SDK refuses a request whose headers disagree with its body, so they are the body's); in 2025-11-25,
 * which has no such headers, from the body Koa parsed once. Labels are bounded: a method outside the MCP methods we
 * know, or a tool we do not offer, is counted as `other`. Registered on the process's metrics registry by this module
 * (docs/operations.md lists the series).
 */
import client, { type Counter, type Registry } from 'prom-client';
import type { Services } from '../platform/services.js';

export type McpEra = '2025-11-25' | '2026-07-28';

const METHODS = new Set([
  'initialize',
  'ping',
  'server/discover',
  'tools/list',
  'tools/call',
  'logging/setLevel',
  'notifications/initialized',
  'notifications/cancelled',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'completion/complete',
  'subscriptions/listen',
]);

type Labels = 'era' | 'method' | 'tool' | 'status';
const counters = new WeakMap<Registry, Counter<Labels>>();

export function mcpRequests(services: Services): Counter<Labels> {
  const registry = services.metrics.registry;
  let counter = counters.get(registry);
  if (!counter) {
    counter = new client.Counter({
      name: 'mcp_requests_total',
      help: 'Agent-tool (MCP) requests by protocol revision, MCP method, tool (tools/call) and HTTP status.',
      labelNames: ['era', 'method', 'tool', 'status'],
      registers: [registry],
    });
    counters.set(registry, counter);
  }
  return counter;
}

/** The method and tool of a 2025-11-25 request, from its parsed body (GET and DELETE have none). */
export function routeOfBody(body: unknown): { method?: string; name?: string } {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return {};
  const { method, params } = body as { method?: unknown; params?: { name?: unknown } };
  return {
    method: typeof method === 'string' ? method : undefined,
    name: method === 'tools/call' && typeof params?.name === 'string' ? params.name : undefined,
  };
}

/** Count one answered request; `tools` is the set of tool names we offer. */
export function countRequest(
  services: Services,
  era: McpEra,
  route: { method?: string; name?: string },
  tools: ReadonlySet<string>,
  status: number,
): void {
  const method = route.method === undefined ? 'none' : METHODS.has(route.method) ? route.method : 'other';
  const tool = method !== 'tools/call' ? '' : route.name && tools.has(route.name) ? route.name : 'other';
  mcpRequests(services).inc({ era, method, tool, status: String(status) });
}
