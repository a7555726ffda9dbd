/**
 * A catalog endpoint an API key installed as one of its own agent tools (`add_api_tools`, issue 25 item 3). The set
 * belongs to the key (an OAuth access token acts for the key the person minted, so it shares that key's set), is
 * stored so it survives restarts and serves every instance and both MCP eras. A row names the endpoint; the tool's
 * price, schema and presence are read from the live listing whenever it is listed or called (mcp/installed-tools.ts),
 * and `priceCents` / `schemaHash` record what the key saw when it installed it. Deleting the key, the listing or the
 * endpoint deletes the row.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { cents, dbNow, sha256Hex } from './common.js';
import { Api } from './api.entity.js';
import { ApiKey } from './api-key.entity.js';
import { Endpoint } from './endpoint.entity.js';

export const McpInstalledTool = defineEntity({
  name: 'McpInstalledTool',
  tableName: 'mcp_installed_tools',
  properties: {
    key: p.manyToOne(ApiKey).primary().deleteRule('cascade'),
    /** A valid MCP tool name (at most 64 of [A-Za-z0-9_.-]), unique per key. */
    toolName: p.string().length(64).primary(),
    api: p.manyToOne(Api).index().deleteRule('cascade'),
    endpoint: p.manyToOne(Endpoint).deleteRule('cascade'),
    /** The effective price per call when installed. */
    priceCents: cents(),
    /** Hex SHA-256 of the tool's input schema when installed. */
    schemaHash: sha256Hex(),
    createdAt: dbNow(),
  },
  uniques: [{ name: 'mcp_installed_tools_key_endpoint_uniq', properties: ['key', 'endpoint'] }],
});

export type IMcpInstalledTool = InferEntity<typeof McpInstalledTool>;
