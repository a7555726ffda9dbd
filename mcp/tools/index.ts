/** Every tool the agent-tool server offers, registered on one McpServer per session. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Services } from '../../core/services.js';
import type { ToolContext } from '../tool-context.js';
import { registerAccountTools } from './accounts.tools.js';
import { registerProfileTools } from './profile.tools.js';
import { registerProviderTools } from './provider.tools.js';
import { registerTermsTools } from './terms.tools.js';

export function registerAllTools(server: McpServer, services: Services, ctx: ToolContext): void {
  registerAccountTools(server, services, ctx);
  registerProviderTools(server, services, ctx);
  registerProfileTools(server, services, ctx);
  registerTermsTools(server, services, ctx);
}
