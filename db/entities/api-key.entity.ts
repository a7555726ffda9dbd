/**
 * An API key. Only the SHA-256 of the plaintext and a short display prefix are stored; the plaintext is shown once.
 * Caps are integer cents (null = no cap). `spentCents` is the lifetime spend the budget is checked against.
 * A key minted by a key is its child (`parentKey`): never looser than its parent (core/keys/key-governance.ts).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { timestamps } from './common.js';
import { Org } from './org.entity.js';

export const KEY_SOURCES = ['register', 'signup', 'api', 'oauth'] as const;
export type KeySource = (typeof KEY_SOURCES)[number];

export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.string().length(40).primary(),
    org: p.manyToOne(Org).index(),
    /** The key that minted this one (null: a root key, minted by registration, signup or a person's session). */
    parentKey: () => p.manyToOne(ApiKey).nullable().index(),
    name: p.text(),
    /** Hex SHA-256 of the plaintext key. */
    keyHash: p.string().length(64).unique(),
    /** `svc_live_` plus the first characters of the random part, for display and rate limiting. */
    keyPrefix: p.string().length(32).index(),
    scopes: p.array(),
    source: p.enum([...KEY_SOURCES]).default('api'),
    budgetCents: p.bigint('number').nullable(),
    perCallMaxCents: p.bigint('number').nullable(),
    dailyCapCents: p.bigint('number').nullable(),
    approvalMode: p.boolean().default(false),
    spentCents: p.bigint('number').default(0),
    /** Approval mode: the spend people have approved so far (cumulative); paid calls stop where spentCents meets it. */
    approvedCents: p.bigint('number').default(0),
    ...timestamps(),
    lastUsedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
  checks: [
    {
      name: 'api_keys_caps_nonnegative',
      expression:
        '(budget_cents IS NULL OR budget_cents >= 0) AND (per_call_max_cents IS NULL OR per_call_max_cents >= 0) AND (daily_cap_cents IS NULL OR daily_cap_cents >= 0) AND spent_cents >= 0',
    },
  ],
});

export type IApiKey = InferEntity<typeof ApiKey>;
