/**
 * An agent-tool (MCP) session, stored so any instance can serve it and it survives restarts (mcp/sessions.ts).
 * Keyed by the SHA-256 of the `Mcp-Session-Id`, never the id itself. Bound to the API key that opened it (for an
 * OAuth token, the key the person minted when approving the client). Holds what rebuilding the session's MCP server
 * needs: the negotiated protocol version and the client's info and capabilities from its `initialize`.
 * `org_id` has no foreign key on purpose: opening a session must not take a lock on `orgs` (long money transactions
 * hold those); the key's foreign key ties the row to the org already.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { dbNow, idRef, sha256Hex } from './common.js';
import { ApiKey } from './api-key.entity.js';

export const MCP_SESSION_END_REASONS = ['terminated', 'evicted', 'key_revoked', 'not_restorable'] as const;
export type McpSessionEndReason = (typeof MCP_SESSION_END_REASONS)[number];

export const McpSessionRecord = defineEntity({
  name: 'McpSessionRecord',
  tableName: 'mcp_sessions',
  properties: {
    /** Hex SHA-256 of the session id. */
    idHash: sha256Hex().primary(),
    orgId: idRef(),
    key: p.manyToOne(ApiKey).index(),
    protocolVersion: p.string().length(20),
    clientInfo: p.json(),
    clientCapabilities: p.json(),
    createdAt: dbNow(),
    /** Written at most once per MCP_SESSION_TOUCH_MS; expiry is MCP_SESSION_IDLE_MS after it. */
    lastSeenAt: p.datetime(),
    /** Set when the session ended (DELETE /mcp, evicted by the org's cap, key revoked, or it could not be rebuilt); the row
     * is purged a day later. */
    endedAt: p.datetime().nullable(),
    endReason: p.enum([...MCP_SESSION_END_REASONS]).nullable(),
  },
  indexes: [{ properties: ['orgId', 'lastSeenAt'] }, { properties: ['lastSeenAt'] }],
});

export type IMcpSessionRecord = InferEntity<typeof McpSessionRecord>;
