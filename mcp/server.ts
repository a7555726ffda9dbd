/** The agent-tool server's MCP application, one per session, apart from any transport (mcp/sessions.ts owns those). */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Services } from '../core/services.js';
import type { ToolContext, ToolRuntime } from './tool-context.js';
import { registerAllTools } from './tools/index.js';

export const SERVER_INFO = { name: 'svc-marketplace', version: '0.1.0' };

export function buildMcpServer(services: Services, context: ToolContext, runtime: ToolRuntime): McpServer {
  // logging: clients may set a level (logging/setLevel); tools only otherwise (no prompts or resources).
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: {}, logging: {} } });
  registerAllTools(server, services, context, runtime);
  return server;
}
