/**
 * A provider's API listing: metadata, the upstream base URL and its credential (encrypted at rest), the latest
 * verification result, and its lifecycle (draft → live → draft; a draft → archived → draft). Endpoints hang off it.
 * "Ever live" is `published_at IS NOT NULL` (unpublishing keeps it): such a listing is archived, never deleted.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { orgOwnedRow } from './org-owned.js';
import { timestamps } from './common.js';

export const API_STATUSES = ['draft', 'live', 'archived'] as const;
export type ApiStatus = (typeof API_STATUSES)[number];
export const INJECTIONS = ['bearer', 'header', 'query', 'basic'] as const;
export type Injection = (typeof INJECTIONS)[number];
export const API_SOURCES = ['provider', 'directory'] as const;
export type ApiSource = (typeof API_SOURCES)[number];
export const VERIFICATION_STATUSES = ['never', 'passed', 'failed'] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];

export interface VerificationEvidence {
  checked_at: string;
  passed: boolean;
  checks: {
    endpoint_id: string;
    method: string;
    path: string;
    status: number | null;
    latency_ms: number | null;
    ok: boolean;
    error: string | null;
    /** `host:port` the check called (the port named even when it is the scheme's default). */
    target?: string;
  }[];
}

export interface ImportSource {
  type: 'openapi_url' | 'external_url';
  url: string;
  imported_at: string;
  openapi_version?: string;
  operations?: number;
}

export const Api = defineEntity({
  name: 'Api',
  tableName: 'apis',
  properties: {
    ...orgOwnedRow(),
    name: p.string().length(100),
    /** Lower-case, URL-safe, unique: the gateway path and the catalog address. */
    slug: p.string().length(64).unique(),
    summary: p.string().length(300),
    description: p.text().nullable(),
    tags: p.array().default([]),
    /** A slug of the category taxonomy (categories table). */
    category: p.string().length(64).nullable(),
    /** `directory`: imported from a public directory, listed and searchable but not callable until claimed. */
    source: p.enum([...API_SOURCES]).default('provider'),
    /** Natural-language questions this API answers (set by the provider; search weighs them highly). */
    examples: p.array().default([]),
    /** Other words people use for what this API does (directory enrichment); searched, never shown. */
    searchTerms: p.array().default([]),
    baseUrl: p.string().length(2000),
    docsUrl: p.string().length(2000).nullable(),
    importSource: p.json<ImportSource>().nullable(),
    status: p.enum([...API_STATUSES]).default('draft'),
    /** AES-256-GCM ciphertext of the upstream secret (core/secrets); never returned. */
    credentialCiphertext: p.text().nullable().lazy(true, false),
    injection: p.enum([...INJECTIONS]).nullable(),
    injectionName: p.string().length(100).nullable(),
    credentialUpdatedAt: p.datetime().nullable(),
    verificationStatus: p.enum([...VERIFICATION_STATUSES]).default('never'),
    verification: p.json<VerificationEvidence>().nullable(),
    /** First set when the listing goes live, kept by unpublish: an ever-live listing is archived, never deleted. */
    publishedAt: p.datetime().nullable(),
    /** When the provider retired it (status `archived`): its URLs answer 410 `api_archived`, its slug stays taken. */
    archivedAt: p.datetime().nullable(),
    ...timestamps(),
  },
  indexes: [
    { name: 'apis_status_category_idx', properties: ['status', 'category'] },
    // The search copy's incremental sync reads the listings changed since its watermark (search-copy.ts).
    { name: 'apis_updated_at_idx', properties: ['updatedAt'] },
  ],
  checks: [
    { name: 'apis_slug_format', expression: "slug ~ '^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$'" },
    {
      name: 'apis_injection_name',
      // Plain comparisons: Postgres rewrites NOT IN (...) into a form the schema diff would never match.
      expression: "injection IS NULL OR injection = 'bearer' OR injection = 'basic' OR injection_name IS NOT NULL",
    },
    { name: 'apis_archived_pair', expression: "(status = 'archived') = (archived_at IS NOT NULL)" },
  ],
});

export type IApi = InferEntity<typeof Api>;
