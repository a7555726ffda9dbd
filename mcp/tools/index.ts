/** Every tool the agent-tool server offers, registered on one McpServer per session. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Services } from '../../platform/services.js';
import type { ToolContext, ToolRuntime } from '../tool-context.js';
import { registerAccountTools } from './accounts.tools.js';
import { registerBillingTools } from './billing.tools.js';
import { registerCallTools } from './calls.tools.js';
import { registerCatalogTools } from './catalog.tools.js';
import { registerInstalledTools } from './installed.tools.js';
import { registerKeyTools } from './keys.tools.js';
import { registerProfileTools } from './profile.tools.js';
import { registerProviderTools } from './provider.tools.js';
import { registerTermsTools } from './terms.tools.js';

export function registerAllTools(server: McpServer, services: Services, ctx: ToolContext, runtime: ToolRuntime): void {
  registerAccountTools(server, services, ctx);
  registerCatalogTools(server, services, ctx);
  registerBillingTools(server, services, ctx);
  registerKeyTools(server, services, ctx);
  registerCallTools(server, services, ctx, runtime);
  registerInstalledTools(server, services, ctx);
  registerProviderTools(server, services, ctx);
  registerProfileTools(server, services, ctx);
  registerTermsTools(server, services, ctx);
}
