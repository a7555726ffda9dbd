/** Paid calls as the gateway records them for the usage committer (core/spend/usage-committer.ts), for its tests. */
import { newId } from '../../core/ids.js';
import { UsageCommitter, type CallRecord } from '../../core/spend/usage-committer.js';
import type { Services } from '../../platform/services.js';

/** Who called what, at which price: the fields a test names. */
export type CallParties = Pick<
  CallRecord,
  'orgId' | 'keyId' | 'apiId' | 'apiSlug' | 'endpointId' | 'providerOrgId' | 'priceCents' | 'path'
>;

/** A `GET` answered 200 (success, no Idempotency-Key, 1 ms) `at`, at its full price; `fields` add or override. */
export function callRecord(fields: CallParties & Partial<CallRecord>, at = new Date()): CallRecord {
  return {
    usageId: newId('usage', at.getTime()),
    method: 'GET',
    status: 200,
    outcome: 'success',
    priceCentsEffective: fields.priceCents,
    latencyMs: 1,
    idempotencyKey: null,
    requestId: newId('request'),
    day: at.toISOString().slice(0, 10),
    at,
    ...fields,
  };
}

/** The committer a usage drain books with (prepared statements on), on `services`' database. */
export function createCommitter(services: Pick<Services, 'orm' | 'logger'>, feePercent: number): UsageCommitter {
  return new UsageCommitter({ orm: services.orm, logger: services.logger, feePercent, prepared: true });
}
