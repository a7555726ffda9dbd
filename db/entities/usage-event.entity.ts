/**
 * One metered gateway call (written by the gateway, in batches, before the response is sent). Read by
 * GET /v1/usage, provider analytics and the provider profile's stats. Money fields are integer cents.
 *
 * Range-partitioned by `created_at` (monthly partitions plus a default one, created ahead and retired after
 * USAGE_RETENTION_DAYS by core/usage/usage-partitions.ts). MikroORM sees only the parent table: it lists no table
 * that is a partition (pg_inherits), and the parent's columns, indexes, keys and checks are declared here exactly,
 * so its schema diff stays empty (docs/decisions.md, Usage partitions).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { cents, createdNow, idRef, idemKey, prefixedId } from './common.js';
import { ApiKey } from './api-key.entity.js';
import { Org } from './org.entity.js';

export const USAGE_OUTCOMES = ['success', 'failed'] as const;
export type UsageOutcome = (typeof USAGE_OUTCOMES)[number];

export const UsageEvent = defineEntity({
  name: 'UsageEvent',
  tableName: 'usage_events',
  properties: {
    id: prefixedId(),
    // No foreign keys (Migration20261128183000_usage_events_no_foreign_keys): each cost a lookup and a row lock per
    // inserted row; the gateway records only keys it authenticated, and orgs and keys are never deleted.
    org: p.manyToOne(Org).createForeignKeyConstraint(false),
    key: p.manyToOne(ApiKey).createForeignKeyConstraint(false),
    apiSlug: p.string().length(64),
    apiId: idRef().nullable(),
    endpointId: idRef().nullable(),
    method: p.string().length(10),
    path: p.string().length(2000),
    status: p.smallint(),
    outcome: p.enum([...USAGE_OUTCOMES]),
    costCents: cents().default(0),
    priceCentsEffective: cents().default(0),
    creditAppliedCents: cents().default(0),
    billableCents: cents().default(0),
    latencyMs: p.integer(),
    idempotencyKey: idemKey().nullable(),
    /** The gateway's own request id (meta.request_id). */
    requestId: p.string().length(128),
    /** The caller's X-Request-Id, when it sent a well-formed one (for its tracing; never used as our id). */
    clientRequestId: p.string().length(128).nullable(),
    /**
     * The usage batch that booked this paid call (usage_batches; docs/decisions.md, Books per batch): null for free and
     * failed calls, calls charged nothing, and calls booked before batches (their ledger rows carry `usage:{id}`).
     * No foreign key and no index: a batch's calls are found by (org_id, created_at between its first_at and last_at).
     */
    batchId: idRef().nullable(),
    /**
     * The partition key (range, one partition per UTC month; Migration20261125120000_usage_partitions), hence part
     * of the primary key: a partitioned table's unique keys must hold it. Gateway rows carry the instant their id
     * encodes, so (id, created_at) stays as unique as the id.
     */
    createdAt: createdNow().primary(),
  },
  indexes: [
    { name: 'usage_events_org_created_idx', properties: ['org', 'createdAt'] },
    { name: 'usage_events_key_created_idx', properties: ['key', 'createdAt'] },
    // The provider profile's stats and provider analytics: one org's APIs over a time range.
    { name: 'usage_events_api_created_idx', properties: ['apiId', 'createdAt'] },
    // The catalog rollups: every listing's calls since a watermark (core/catalog/rollups/rollups.service.ts).
    { name: 'usage_events_created_idx', properties: ['createdAt'] },
  ],
  checks: [
    {
      name: 'usage_events_money_nonnegative',
      expression:
        'cost_cents >= 0 AND price_cents_effective >= 0 AND credit_applied_cents >= 0 AND billable_cents >= 0',
    },
  ],
});

export type IUsageEvent = InferEntity<typeof UsageEvent>;
