/**
 * One batch of a consumer org's paid calls, booked together by the gateway's group commit
 * (core/spend/usage-committer.ts; docs/decisions.md, Books per batch): the calls of one org that one commit
 * transaction charged, split by collection (calls paid wholly from credit, and calls with a billable part). The batch
 * has exactly one consumer ledger row (`usage`, idempotency key and reference `usage_batch:{id}`, amount
 * −charged_cents, an exact balance_after), every call's usage event points at it (`usage_events.batch_id`), and the
 * providers' earnings are booked per (provider, batch) with the fee computed per call and summed.
 *
 * Kept forever (usage partitions are retired, batches are not): reconciliation ties every batch to its ledger row and
 * earnings by these totals after the calls' rows are gone.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { cents, createdNow, idRef, prefixedId } from './common.js';
import { Org } from './org.entity.js';

export const UsageBatch = defineEntity({
  name: 'UsageBatch',
  tableName: 'usage_batches',
  properties: {
    id: prefixedId(),
    org: p.manyToOne(Org),
    /** How many calls point at the batch. */
    calls: p.integer(),
    /** What the batch took from the org's balance: minus its ledger row's amount (the sum of each call's charge). */
    chargedCents: cents(),
    /** The sums of the calls' `credit_applied_cents` and `billable_cents`. */
    creditAppliedCents: cents(),
    billableCents: cents(),
    /** The first and last call of the batch (commit order) and the earliest and latest call instants. */
    firstUsageId: idRef(),
    lastUsageId: idRef(),
    firstAt: p.datetime(),
    lastAt: p.datetime(),
    createdAt: createdNow(),
  },
  indexes: [{ name: 'usage_batches_org_last_idx', properties: ['org', 'lastAt'] }],
  checks: [
    {
      name: 'usage_batches_money',
      expression:
        'calls > 0 AND charged_cents > 0 AND credit_applied_cents >= 0 AND billable_cents >= 0 AND first_at <= last_at',
    },
  ],
});

export type IUsageBatch = InferEntity<typeof UsageBatch>;
