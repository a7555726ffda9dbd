/** Account tools: `svc_register` (the same core function as POST /v1/register). */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { Services } from '../../platform/services.js';
import type { ToolContext } from '../tool-context.js';
import { runTool } from './tool-result.js';
import { dataOrError } from './tool-schemas.js';

/** The tool definitions (built once per process: a 2026-07-28 request builds its server per request). */
const DEFS = {
  svc_register: {
    title: 'Register an org',
    description: 'A new org and API key (consumer scopes, 0 credits), shown only here: store it.',
    inputSchema: z.object({}).strict(),
    outputSchema: dataOrError({ org_id: z.string(), api_key: z.string(), credit_cents: z.number().int() }),
    // Creates an org and a key each time; nothing is overwritten.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
};

export function registerAccountTools(server: McpServer, services: Services, ctx: ToolContext): void {
  server.registerTool('svc_register', DEFS.svc_register, () =>
    runTool(ctx.log, async () => ({ ...(await services.accounts.register({ ip: ctx.ip })) })),
  );
}
