/**
 * The agent-tool server's MCP application, apart from any transport: one v1 McpServer per 2025-11-25 session
 * (mcp/sessions.ts owns those), and one v2 McpServer per stateless 2026-07-28 request (mcp/modern.ts). Both register
 * the same tools (mcp/tools/*, written once against the v1 registration API; the v2 one takes the same arguments)
 * and answer `tools/list` with the same listing, byte for byte.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpServer as ModernMcpServer, type Tool as ModernTool } from '@modelcontextprotocol/server';
import type { RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Services } from '../platform/services.js';
import type { ToolContext, ToolRuntime } from './tool-context.js';
import { personStateVerifier } from './elicitation.js';
import { trackSession, withInstalledTools } from './installed-tools.js';
import { advertise, recordTools, toolDefinition } from './tool-listing.js';
import { registerAllTools } from './tools/index.js';
import { keyPrincipal } from './tools/keys.tools.js';

export const SERVER_INFO = { name: 'svc-marketplace', version: '0.1.0' };

/**
 * What the server tells every client at `initialize` (under 1 KB; test/integration/mcp/mcp-tool-metadata.test.ts): the
 * order of work, what costs money, the caps, and the steps only a person can take.
 */
export const SERVER_INSTRUCTIONS = [
  'API marketplace: find third-party APIs and call them through one metered gateway.',
  'Order: discover_tools -> get_schema (paths) -> quote_call (price, and whether the call is admitted; free) ->',
  'call_api (billed at that price; an idempotency_key makes retries safe). add_api_tools makes an API your own tools.',
  'Only tools marked MOVES MONEY (_meta "svc/moves_money") can cost or move money; "svc/price" says how much or',
  'how to quote it. The others are free.',
  "Your key's caps bound spend (budget, daily cap, per-call max); set_budget only tightens them.",
  'provision_access says what is missing.',
  'A person must act in a browser to accept API terms or approve spend (approval_url), buy credits',
  '(create_checkout), add a card (billing_setup) or set up payouts (provider_connect_onboard): give them the URL.',
  'Refusals are isError results with a code (payment_required, terms_acceptance_required, forbidden with',
  'details.missing_scope...) and details.next_step when a person must act.',
].join(' ');

/** The tools/list answer, the same for every session and request of a process, in both eras. */
const listings = new WeakMap<Services, Tool[]>();

/**
 * How long a 2026-07-28 client may keep the `tools/list` and `server/discover` answers (`ttlMs`): they change only
 * with a deploy. `public`: every caller gets the same ones (scopes are checked when a tool is called, not by hiding
 * it). A key with installed API tools gets them after the default ones, in a `private` list with `ttlMs: 0`.
 */
export const TOOLS_LIST_TTL_MS = 3_600_000;

function listingOf(services: Services, tools: Map<string, RegisteredTool>): Tool[] {
  let listing = listings.get(services);
  if (!listing) {
    listing = [...tools].map(([name, tool]) => toolDefinition(name, tool));
    listings.set(services, listing);
  }
  return listing;
}

export function buildMcpServer(services: Services, context: ToolContext, runtime: ToolRuntime): McpServer {
  // logging: clients may set a level (logging/setLevel); tools only otherwise (no prompts or resources). The first
  // tool registered declares `tools: { listChanged: true }`: the key's installed API tools change.
  const server = new McpServer(SERVER_INFO, { capabilities: { logging: {} }, instructions: SERVER_INSTRUCTIONS });
  // The key's installed API tools (mcp/installed-tools.ts): listed after the default ones, told of changes. Hooked
  // before the first tool is registered (that sets the SDK's tools/list and tools/call handlers).
  const tools = recordTools(server);
  withInstalledTools(server.server as never, services, context, runtime, false, () => listingOf(services, tools));
  trackSession(server, services, keyPrincipal(context).keyId);
  registerAllTools(server, services, context, runtime);
  advertise(server, () => listingOf(services, tools));
  return server;
}

/**
 * The 2026-07-28 application for one request (the SDK's v2 server: `server/discover`, the `_meta` envelope, cache
 * fields). The tools are registered through a facade with the v1 signature (the v2 `registerTool` takes the same
 * name, config with zod schemas, and callback; our callbacks use only their arguments). `tools/list` answers the
 * listing the v1 server computes (built once per process from a v1 server when no 2025 session has done so yet).
 */
export function buildModernMcpServer(services: Services, context: ToolContext, runtime: ToolRuntime): ModernMcpServer {
  const server = new ModernMcpServer(SERVER_INFO, {
    instructions: SERVER_INSTRUCTIONS,
    // A person's step (mcp/elicitation.ts): the sealed requestState is opened, for this key, before a tool runs.
    requestState: { verify: personStateVerifier(services, context) },
    cacheHints: {
      'tools/list': { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'public' },
      'server/discover': { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'public' },
    },
  });
  withInstalledTools(server.server, services, context, runtime, true, () => toolListing(services, context, runtime));
  const facade = {
    registerTool: (name: string, config: object, cb: unknown) => server.registerTool(name, config, cb as never),
  } as unknown as McpServer;
  registerAllTools(facade, services, context, runtime);
  // Stateless: no notifications (the SDK would otherwise advertise listChanged). The default list changes only with a
  // deploy; a key's installed tools come after it, in a private list (mcp/installed-tools.ts).
  server.server.registerCapabilities({ tools: { listChanged: false } });
  const tools = toolListing(services, context, runtime) as unknown as ModernTool[]; // v2 types JSON Schema narrower
  server.server.setRequestHandler('tools/list', () => ({ tools }));
  return server;
}

/** The listing, computed from a throwaway v1 server when no session has listed the tools yet. */
function toolListing(services: Services, context: ToolContext, runtime: ToolRuntime): Tool[] {
  return (
    listings.get(services) ??
    listingOf(services, recordAndRegister(new McpServer(SERVER_INFO), services, context, runtime))
  );
}

const names = new WeakMap<Tool[], ReadonlySet<string>>();

/** The names of the tools we offer (for bounded metric labels). */
export function toolNames(services: Services, context: ToolContext, runtime: ToolRuntime): ReadonlySet<string> {
  const listing = toolListing(services, context, runtime);
  let set = names.get(listing);
  if (!set) {
    set = new Set(listing.map((t) => t.name));
    names.set(listing, set);
  }
  return set;
}

function recordAndRegister(
  server: McpServer,
  services: Services,
  context: ToolContext,
  runtime: ToolRuntime,
): Map<string, RegisteredTool> {
  const tools = recordTools(server);
  registerAllTools(server, services, context, runtime);
  return tools;
}
