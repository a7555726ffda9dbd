/**
 * An organization: the unit that owns keys, credits and listings. `creditCents` is a cache of the org's ledger sum,
 * changed only in the same transaction as the ledger row that explains it (core/billing/ledger.service.ts).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { cents, prefixedId, timestamps } from './common.js';

export const ORG_KINDS = ['ephemeral', 'standard'] as const;
export type OrgKind = (typeof ORG_KINDS)[number];
export const BILLING_MODES = ['prepaid', 'card'] as const;
export const CONNECT_STATUSES = ['none', 'pending', 'enabled'] as const;
export type ConnectStatus = (typeof CONNECT_STATUSES)[number];
export type BillingMode = (typeof BILLING_MODES)[number];

export const Org = defineEntity({
  name: 'Org',
  tableName: 'orgs',
  properties: {
    id: prefixedId(),
    kind: p.enum([...ORG_KINDS]).default('ephemeral'),
    name: p.text().nullable(),
    billingMode: p.enum([...BILLING_MODES]).default('prepaid'),
    creditCents: cents().default(0),
    /** Bumped with every change of creditCents: the gateway's fast state keeps only the newest balance it has seen. */
    balanceVersion: p.bigint('number').default(0),
    /** Trial credit granted at human signup but held until the email is verified (not spendable, not in the ledger). */
    withheldCreditCents: cents().default(0),
    suspended: p.boolean().default(false),
    suspendedReason: p.text().nullable(),
    /** Stripe Connect (payouts to providers): the connected account and where onboarding stands. */
    stripeAccountId: p.string().length(64).nullable().unique(),
    connectStatus: p.enum([...CONNECT_STATUSES]).default('none'),
    /** Stripe customer (cards, checkout, portal) and the saved card used off-session. */
    stripeCustomerId: p.string().length(64).nullable().unique(),
    hasPaymentMethod: p.boolean().default(false),
    defaultPaymentMethodId: p.string().length(64).nullable(),
    autoReloadEnabled: p.boolean().default(false),
    autoReloadThresholdCents: cents().nullable(),
    autoReloadAmountCents: cents().nullable(),
    /** Set in the ledger transaction that takes the balance under the auto-reload threshold; cleared by the trigger. */
    reloadRequestedAt: p.datetime().nullable(),
    /** A card-billed org's spending bound between usage charges; null = CARD_CREDIT_LIMIT_CENTS. Set by operators. */
    creditLimitCents: cents().nullable(),
    /**
     * How far below zero a chargeback on earnings already paid out has taken a prepaid org's balance (the only way a
     * prepaid balance goes negative); back to 0 once earnings repay it.
     */
    chargebackCarryCents: cents().default(0),
    /**
     * The public directory's own org (core/catalog/public-apis/public-apis-import.ts): set by the import, never by a user, and held
     * by at most one org. The import finds its org by this flag, never by a profile slug someone else could take.
     */
    directory: p.boolean().default(false),
    ...timestamps(),
  },
  uniques: [
    {
      name: 'orgs_directory_uniq',
      expression: 'create unique index "orgs_directory_uniq" on "orgs" ("directory") where "directory"',
    },
  ],
  checks: [
    {
      name: 'orgs_prepaid_credit_nonnegative',
      expression: "billing_mode <> 'prepaid' OR credit_cents >= -chargeback_carry_cents",
    },
    { name: 'orgs_chargeback_carry_nonnegative', expression: 'chargeback_carry_cents >= 0' },
    { name: 'orgs_withheld_credit_nonnegative', expression: 'withheld_credit_cents >= 0' },
    { name: 'orgs_credit_limit_nonnegative', expression: 'credit_limit_cents IS NULL OR credit_limit_cents >= 0' },
    {
      name: 'orgs_auto_reload_settings',
      expression:
        'auto_reload_enabled = false OR (auto_reload_threshold_cents IS NOT NULL AND auto_reload_amount_cents IS NOT NULL AND auto_reload_amount_cents > 0)',
    },
  ],
});

export type IOrg = InferEntity<typeof Org>;
