/**
 * A provider's earning from one paid call, queued by the gateway's commit so that no call locks the provider's org
 * row. The worker folds queued accruals into the provider's ledger (`provider_earning` and `platform_fee` rows,
 * idempotency keys `earning:{usage}` and `fee:{usage}`) and deletes them in the same transaction. Until then the
 * reconciliation counts a queued accrual as the call's earning.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const EarningAccrual = defineEntity({
  name: 'EarningAccrual',
  tableName: 'earning_accruals',
  properties: {
    usageId: p.string().length(40).primary(),
    providerOrgId: p.string().length(40),
    consumerOrgId: p.string().length(40),
    grossCents: p.bigint('number'),
    feeCents: p.bigint('number'),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ name: 'earning_accruals_created_idx', properties: ['createdAt', 'usageId'] }],
  checks: [
    { name: 'earning_accruals_money', expression: 'gross_cents > 0 AND fee_cents >= 0 AND fee_cents <= gross_cents' },
  ],
});

export type IEarningAccrual = InferEntity<typeof EarningAccrual>;
