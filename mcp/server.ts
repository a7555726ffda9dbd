/** The agent-tool server's MCP application, one per session, apart from any transport (mcp/sessions.ts owns those). */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Services } from '../core/services.js';
import type { ToolContext } from './tool-context.js';
import { registerAllTools } from './tools/index.js';

export const SERVER_INFO = { name: 'svc-marketplace', version: '0.1.0' };

export function buildMcpServer(services: Services, context: ToolContext): McpServer {
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} } });
  registerAllTools(server, services, context);
  return server;
}
