/**
 * An API key. Only the SHA-256 of the plaintext and a short display prefix are stored; the plaintext is shown once.
 * Caps are integer cents (null = no cap). `spentCents` is the lifetime spend the budget is checked against.
 * A key minted by a key is its child (`parentKey`): never looser than its parent (core/keys/key-governance.ts).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { orgOwnedRow } from './org-owned.js';
import { cents, sha256Hex, timestamps } from './common.js';

export const KEY_SOURCES = ['register', 'signup', 'api', 'oauth'] as const;
export type KeySource = (typeof KEY_SOURCES)[number];

export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    ...orgOwnedRow(),
    /** The key that minted this one (null: a root key, minted by registration, signup or a person's session). */
    parentKey: () => p.manyToOne(ApiKey).nullable().index(),
    name: p.text(),
    /** Hex SHA-256 of the plaintext key. */
    keyHash: sha256Hex().unique(),
    /** `svc_live_` plus the first characters of the random part, for display and rate limiting. */
    keyPrefix: p.string().length(32).index(),
    scopes: p.array(),
    source: p.enum([...KEY_SOURCES]).default('api'),
    budgetCents: cents().nullable(),
    perCallMaxCents: cents().nullable(),
    dailyCapCents: cents().nullable(),
    approvalMode: p.boolean().default(false),
    spentCents: cents().default(0),
    /**
     * The UTC day (YYYY-MM-DD) of the key's latest paid call and its spend that day, which the daily cap is checked
     * against (issue 32: one row per key and batch instead of a key row and a key-day row; an older day's spend is
     * never read again).
     */
    spentDay: p.string().length(10).nullable(),
    daySpentCents: cents().default(0),
    /** Approval mode: the spend people have approved so far (cumulative); paid calls stop where spentCents meets it. */
    approvedCents: cents().default(0),
    ...timestamps(),
    lastUsedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
  checks: [
    { name: 'api_keys_day_spent_nonnegative', expression: 'day_spent_cents >= 0' },
    {
      name: 'api_keys_caps_nonnegative',
      expression:
        '(budget_cents IS NULL OR budget_cents >= 0) AND (per_call_max_cents IS NULL OR per_call_max_cents >= 0) AND (daily_cap_cents IS NULL OR daily_cap_cents >= 0) AND spent_cents >= 0',
    },
  ],
});

export type IApiKey = InferEntity<typeof ApiKey>;
