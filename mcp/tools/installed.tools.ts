/**
 * add_api_tools and remove_api_tools (issue 25 item 3): a key installs a live listing's endpoints as its own typed
 * tools, and removes them. The set is stored per key (core/agent-tools), so every session and request of the key, in
 * either era and on any instance, lists and calls them (mcp/installed-tools.ts); its 2025-11-25 sessions are told
 * with `notifications/tools/list_changed`. Both need `proxy:call`, which calling an installed tool needs; neither
 * moves money (calling an installed tool does, at its endpoint's price).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { LiveInstalledTool } from '../../core/agent-tools/installed-tools.service.js';
import { MAX_INSTALLED_PER_KEY } from '../../core/agent-tools/installed-tools.service.js';
import type { Services } from '../../platform/services.js';
import { announceToolsChanged, installedTools } from '../installed-tools.js';
import type { ToolContext } from '../tool-context.js';
import { SlugArg } from './catalog.tools.js';
import { scopedKey } from './keys.tools.js';
import { checkArgs, runTool } from './tool-result.js';
import { dataOrError } from './tool-schemas.js';

const Selectors = z.array(z.string().trim().min(1).max(600)).min(1).max(MAX_INSTALLED_PER_KEY).optional();

const InstalledOut = z.looseObject({
  name: z.string(),
  endpoint_id: z.string(),
  method: z.string(),
  path: z.string(),
  price_cents_effective: z.number().int(),
});

const ChangedNote = z
  .boolean()
  .describe('Your tool list changed: list tools again (2025-11-25 sessions are also sent list_changed).');

const view = (t: LiveInstalledTool) => ({
  name: t.name,
  endpoint_id: t.endpoint.id,
  method: t.endpoint.method,
  path: t.endpoint.path,
  price_cents_effective: t.priceCentsEffective,
});

const DEFS = {
  add_api_tools: {
    title: 'Install API tools',
    description:
      "Install a live API's endpoints as your own tools (<slug>__<operation>, flat arguments, price and caps " +
      `described); calling one is call_api for it. At most ${MAX_INSTALLED_PER_KEY} per key.`,
    inputSchema: z
      .object({ slug: SlugArg, endpoints: Selectors.describe('Endpoint ids or "METHOD /path". Default: all.') })
      .strict(),
    outputSchema: dataOrError({
      api: z.string(),
      tools: z.array(InstalledOut),
      added: z.array(z.string()),
      tools_list_changed: ChangedNote,
    }),
    // Installing what is installed changes nothing; nothing outside the marketplace is touched.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  remove_api_tools: {
    title: 'Remove API tools',
    description: "Remove an API's tools add_api_tools installed (all, or those named).",
    inputSchema: z
      .object({
        slug: SlugArg,
        endpoints: Selectors.describe('Endpoint ids, "METHOD /path" or tool names. Default: all.'),
      })
      .strict(),
    outputSchema: dataOrError({ api: z.string(), removed: z.array(z.string()), tools_list_changed: ChangedNote }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
};

export function registerInstalledTools(server: McpServer, services: Services, ctx: ToolContext): void {
  server.registerTool('add_api_tools', DEFS.add_api_tools, (args) =>
    runTool(ctx.log, async () => {
      checkArgs(args);
      const principal = scopedKey(ctx, 'proxy:call');
      const outcome = await installedTools(services).install(principal, args.slug, args.endpoints);
      if (outcome.added.length > 0) await announceToolsChanged(services, principal.keyId);
      return {
        api: outcome.api,
        tools: outcome.tools.map(view),
        added: outcome.added,
        tools_list_changed: outcome.added.length > 0,
      };
    }),
  );

  server.registerTool('remove_api_tools', DEFS.remove_api_tools, (args) =>
    runTool(ctx.log, async () => {
      checkArgs(args);
      const principal = scopedKey(ctx, 'proxy:call');
      const removed = await installedTools(services).remove(principal, args.slug, args.endpoints);
      if (removed.length > 0) await announceToolsChanged(services, principal.keyId);
      return { api: args.slug, removed, tools_list_changed: removed.length > 0 };
    }),
  );
}
