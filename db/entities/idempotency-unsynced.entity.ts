/**
 * Idempotent calls booked in Postgres without passing through the fast state's settle (the direct booking after an
 * unknown settle outcome, a free call while the fast state was down), so Redis's per-org set of seen keys may lack
 * them (docs/durability.md, "A first-seen Idempotency-Key"). Written in the booking's own statement; every gateway
 * process adds the rows to Redis's seen sets and deletes them within about half a second. While any row is here, no
 * gateway answers a first-seen key from Redis alone. Small by design: normally empty.
 */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { dbNow, idempotencyPk } from './common.js';

export const IdempotencyUnsynced = defineEntity({
  name: 'IdempotencyUnsynced',
  tableName: 'idempotency_unsynced',
  properties: {
    ...idempotencyPk(),
    createdAt: dbNow(),
  },
});

export type IIdempotencyUnsynced = InferEntity<typeof IdempotencyUnsynced>;
