/**
 * One movement of credit, append-only: rows are never updated or deleted (a trigger in the migrations refuses it).
 * The sum of an org's rows equals `orgs.credit_cents`; `balanceAfterCents` records the balance this row produced.
 * `(org, idempotencyKey)` is unique, so a retried grant or charge is applied at most once.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { cents, createdNow, idemKey, prefixedId } from './common.js';
import { Org } from './org.entity.js';

export const LEDGER_KINDS = [
  'grant',
  'purchase',
  'auto_reload',
  'usage',
  'refund',
  'adjustment',
  'provider_earning',
  'platform_fee',
  'payout',
  'chargeback',
] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

export const LedgerEntry = defineEntity({
  name: 'LedgerEntry',
  tableName: 'ledger_entries',
  properties: {
    id: prefixedId(),
    org: p.manyToOne(Org),
    kind: p.enum([...LEDGER_KINDS]),
    amountCents: cents(),
    balanceAfterCents: cents(),
    idempotencyKey: idemKey().nullable(),
    /** What caused the movement, e.g. `workflow:signup-credits:org_…` or `usage:use_…`. */
    reference: p.string().length(200).nullable(),
    memo: p.text().nullable(),
    createdAt: createdNow(),
  },
  indexes: [{ name: 'ledger_entries_org_created_idx', properties: ['org', 'createdAt'] }],
  uniques: [{ name: 'ledger_entries_org_idempotency_key_uniq', properties: ['org', 'idempotencyKey'] }],
  checks: [{ name: 'ledger_entries_amount_nonzero', expression: 'amount_cents <> 0' }],
});

export type ILedgerEntry = InferEntity<typeof LedgerEntry>;
