/**
 * The idempotency backstop (spec, gateway rule 2): one row per successful call made with an Idempotency-Key, written
 * in the same statement as its usage event, unique on (org, key, client key). The gateway's fast state answers most
 * replays; this table answers when the fast state has forgotten (Redis flushed, a settle lost, a record expired), and
 * its primary key makes a second debit for one key impossible. Kept apart from `usage_events` so that table can be
 * time-partitioned later (a partitioned table cannot hold a global unique index).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { dbNow, idRef, idempotencyPk, sha256Hex } from './common.js';

export const IdempotencyRecord = defineEntity({
  name: 'IdempotencyRecord',
  tableName: 'idempotency_records',
  properties: {
    ...idempotencyPk(),
    usageId: idRef(),
    /** Hash of method, path, query and body: the same key with another request is refused (422). */
    requestHash: sha256Hex(),
    /** Billing meta that is not on the usage row (a scheduled increase, an active discount). */
    extra: p.json().nullable(),
    createdAt: dbNow(),
  },
});

export type IIdempotencyRecord = InferEntity<typeof IdempotencyRecord>;
