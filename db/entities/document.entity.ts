/**
 * A provider's legal document (terms, privacy, …). Immutable once created: a change is a new version. Activation
 * makes it effective (superseding the previous active version of the same kind and scope); `content_hash` is the
 * SHA-256 of the body, which acceptances pin.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { orgOwnedRow } from './org-owned.js';
import { createdNow, sha256Hex } from './common.js';
import { Api } from './api.entity.js';

export const DOCUMENT_KINDS = ['terms', 'privacy', 'acceptable_use', 'sla', 'dpa', 'other'] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];
export const DOCUMENT_SOURCES = ['hosted'] as const;
export const ACCEPTANCE_MODES = ['required', 'optional'] as const;
export type AcceptanceMode = (typeof ACCEPTANCE_MODES)[number];
export const DOCUMENT_STATUSES = ['draft', 'active', 'superseded'] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

export const Document = defineEntity({
  name: 'Document',
  tableName: 'documents',
  properties: {
    ...orgOwnedRow(),
    api: p.manyToOne(Api).nullable().index(),
    kind: p.enum([...DOCUMENT_KINDS]),
    source: p.enum([...DOCUMENT_SOURCES]).default('hosted'),
    version: p.string().length(50),
    title: p.string().length(200).nullable(),
    body: p.text().lazy(true, false),
    contentHash: sha256Hex(),
    acceptanceMode: p.enum([...ACCEPTANCE_MODES]).default('optional'),
    status: p.enum([...DOCUMENT_STATUSES]).default('draft'),
    activatedAt: p.datetime().nullable(),
    supersededAt: p.datetime().nullable(),
    createdAt: createdNow(),
  },
  indexes: [{ name: 'documents_scope_idx', properties: ['org', 'api', 'kind', 'status'] }],
});

export type IDocument = InferEntity<typeof Document>;
