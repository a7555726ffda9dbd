/**
 * Postgres as the idempotency backstop (spec, gateway rule 2: a replay is defined by a prior successful usage event for
 * the same org, key and idempotency key). The gateway asks here when its fast state has no record of a key: after a
 * Redis flush or restart, a lost settle, or a record past its 25 h expiry. The answer is in the same `d|hash|meta`
 * form the fast state stores, so both replay alike.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { doneRecord } from './spend-store.js';

export async function findIdempotencyRecord(
  orm: MikroORM,
  orgId: string,
  keyId: string,
  clientKey: string,
): Promise<string | null> {
  const [row] = await orm.em.fork().execute<
    {
      request_hash: string;
      extra: Record<string, unknown> | null;
      request_id: string;
      cost_cents: string;
      price_cents_effective: string;
      credit_applied_cents: string;
      billable_cents: string;
    }[]
  >(
    `select r.request_hash, r.extra, u.request_id, u.cost_cents, u.price_cents_effective, u.credit_applied_cents,
            u.billable_cents
       from idempotency_records r join usage_events u on u.id = r.usage_id
      where r.org_id = ? and r.key_id = ? and r.idempotency_key = ?`,
    [orgId, keyId, clientKey],
  );
  if (!row) return null;
  const meta = {
    request_id: row.request_id,
    cost_cents: Number(row.cost_cents),
    price_cents_effective: Number(row.price_cents_effective),
    credit_applied_cents: Number(row.credit_applied_cents),
    billable_cents: Number(row.billable_cents),
    ...(row.extra ?? {}),
  };
  return doneRecord(row.request_hash, JSON.stringify(meta));
}
