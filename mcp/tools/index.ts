/** Every tool the agent-tool server offers, registered on one McpServer per session. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Services } from '../../core/services.js';
import type { ToolContext } from '../tool-context.js';
import { registerAccountTools } from './accounts.tools.js';

export function registerAllTools(server: McpServer, services: Services, ctx: ToolContext): void {
  registerAccountTools(server, services, ctx);
}
