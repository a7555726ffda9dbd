/**
 * An endpoint its provider removed from a listing that was ever live (docs/decisions.md, issue 31): the row moves here
 * from `endpoints` at its sunset, with the same id, so the history that names it (usage_events, earnings, the
 * ledger's usage rows) still resolves, and the gateway answers its method and path `410 endpoint_removed` with the
 * date. Every reader of `endpoints` (listing, search, schema, OpenAPI export, quote, rollups, installed agent tools)
 * sees only endpoints a caller can use, with no filter to forget; the same method and path can be added again.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Api } from './api.entity.js';
import { cents, prefixedId } from './common.js';
import { ENDPOINT_METHODS } from './endpoint.entity.js';

export const RemovedEndpoint = defineEntity({
  name: 'RemovedEndpoint',
  tableName: 'removed_endpoints',
  properties: {
    /** The endpoint's own id (`ep_…`). */
    id: prefixedId(),
    api: p.manyToOne(Api).index().deleteRule('cascade'),
    method: p.enum([...ENDPOINT_METHODS]),
    path: p.string().length(500),
    summary: p.string().length(200).nullable(),
    operationId: p.string().length(200).nullable(),
    inputSchema: p.json<Record<string, unknown>>().nullable(),
    outputSchema: p.json<Record<string, unknown>>().nullable(),
    /** The list price when it was removed. */
    priceCents: cents(),
    /** When the removal was announced (equal to `removedAt` for a removal without notice). */
    removalAnnouncedAt: p.datetime(),
    removedAt: p.datetime(),
    /** When the endpoint was created. */
    createdAt: p.datetime(),
  },
});

export type IRemovedEndpoint = InferEntity<typeof RemovedEndpoint>;
