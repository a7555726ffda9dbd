/**
 * A provider's earning from one usage batch (the provider's calls in it; `batch_id`), queued by the gateway's commit so
 * that no call locks the provider's org row: gross is the sum of the calls' charges, fee the sum of each call's fee
 * (core/money/split.ts, per call, so no rounding drift). An accrual queued before batches holds one call
 * (`usage_id`, and its id is the usage id). The worker folds queued accruals into the provider's ledger
 * (`provider_earning` and `platform_fee` rows, idempotency keys `earning:{id}` and `fee:{id}`, reference
 * `usage_batch:{batch}` or `usage:{usage}`) and deletes them in the same transaction. Until then the reconciliation
 * counts a queued accrual as the batch's earning.
 */
import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { cents, dbNow, idRef, prefixedId } from './common.js';

export const EarningAccrual = defineEntity({
  name: 'EarningAccrual',
  tableName: 'earning_accruals',
  properties: {
    id: prefixedId(),
    batchId: idRef().nullable(),
    usageId: idRef().nullable(),
    providerOrgId: idRef(),
    consumerOrgId: idRef(),
    grossCents: cents(),
    feeCents: cents(),
    createdAt: dbNow(),
  },
  indexes: [{ name: 'earning_accruals_created_idx', properties: ['createdAt', 'id'] }],
  checks: [
    { name: 'earning_accruals_money', expression: 'gross_cents > 0 AND fee_cents >= 0 AND fee_cents <= gross_cents' },
    { name: 'earning_accruals_source', expression: 'batch_id IS NOT NULL OR usage_id IS NOT NULL' },
  ],
});

export type IEarningAccrual = InferEntity<typeof EarningAccrual>;
