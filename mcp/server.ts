/** The agent-tool server's MCP application, one per session, apart from any transport (mcp/sessions.ts owns those). */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Services } from '../platform/services.js';
import type { ToolContext, ToolRuntime } from './tool-context.js';
import { advertise, recordTools, toolDefinition } from './tool-listing.js';
import { registerAllTools } from './tools/index.js';

export const SERVER_INFO = { name: 'svc-marketplace', version: '0.1.0' };

/**
 * What the server tells every client at `initialize` (under 1 KB; test/integration/mcp-tool-metadata.test.ts): the
 * order of work, what costs money, the caps, and the steps only a person can take.
 */
export const SERVER_INSTRUCTIONS = [
  'API marketplace: find third-party APIs and call them through one metered gateway.',
  'Order: discover_tools -> get_schema (paths) -> quote_call (price, and whether the call is admitted; free) ->',
  'call_api (billed at that price; an idempotency_key makes retries safe).',
  'Tools whose _meta has "svc/moves_money" can move money; "svc/price" says how much or how to quote it.',
  "Your key's caps bound spend (budget, daily cap, per-call max); set_budget only tightens them.",
  'provision_access says what is missing.',
  'A person must act in a browser to accept API terms or approve spend (approval_url), buy credits',
  '(create_checkout), add a card (billing_setup) or set up payouts (provider_connect_onboard): give them the URL.',
  'Refusals are isError results with a code (payment_required, terms_acceptance_required, forbidden with',
  'details.missing_scope...) and details.next_step when a person must act.',
].join(' ');

/** The tools/list answer, the same for every session of a process. */
const listings = new WeakMap<Services, Tool[]>();

export function buildMcpServer(services: Services, context: ToolContext, runtime: ToolRuntime): McpServer {
  // logging: clients may set a level (logging/setLevel); tools only otherwise (no prompts or resources).
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {}, logging: {} },
    instructions: SERVER_INSTRUCTIONS,
  });
  const tools = recordTools(server);
  registerAllTools(server, services, context, runtime);
  advertise(server, () => {
    let listing = listings.get(services);
    if (!listing) {
      listing = [...tools].map(([name, tool]) => toolDefinition(name, tool));
      listings.set(services, listing);
    }
    return listing;
  });
  return server;
}
