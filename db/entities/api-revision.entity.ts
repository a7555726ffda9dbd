/**
 * A live listing's staged endpoint changes (docs/decisions.md, issue 31): one `open` revision per listing collects
 * additions, changes and removals; publishing it (verifyAndPublishWorkflow, action `publish_revision`) smoke-tests
 * the new and changed endpoints and applies the set at once; discarding it drops it. Unpublishing the listing applies
 * an open revision to the draft. Numbered per listing from 1.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Api, type VerificationEvidence } from './api.entity.js';
import { prefixedId, timestamps } from './common.js';
import type { EndpointMethod } from './endpoint.entity.js';

export const REVISION_STATUSES = ['open', 'published', 'discarded'] as const;
export type RevisionStatus = (typeof REVISION_STATUSES)[number];

/** An endpoint a revision adds; its id is chosen when it is staged and kept when it goes live. */
export interface StagedEndpoint {
  endpoint_id: string;
  method: EndpointMethod;
  path: string;
  summary: string | null;
  operation_id: string | null;
  input_schema: Record<string, unknown> | null;
  output_schema: Record<string, unknown> | null;
  price_cents: number;
}

/** The fields a revision changes on an existing endpoint (only those present change). */
export interface StagedUpdate {
  endpoint_id: string;
  summary?: string | null;
  operation_id?: string | null;
  input_schema?: Record<string, unknown> | null;
  output_schema?: Record<string, unknown> | null;
}

export interface RevisionChanges {
  add: StagedEndpoint[];
  update: StagedUpdate[];
  /** Endpoint ids whose removal the revision announces. */
  remove: string[];
}

export const ApiRevision = defineEntity({
  name: 'ApiRevision',
  tableName: 'api_revisions',
  properties: {
    id: prefixedId(),
    api: p.manyToOne(Api).deleteRule('cascade'),
    number: p.integer(),
    status: p.enum([...REVISION_STATUSES]).default('open'),
    changes: p.json<RevisionChanges>(),
    /** The smoke test of its new and changed endpoints, when it was published. */
    verification: p.json<VerificationEvidence>().nullable(),
    publishedAt: p.datetime().nullable(),
    discardedAt: p.datetime().nullable(),
    ...timestamps(),
  },
  uniques: [
    { name: 'api_revisions_api_number_uniq', properties: ['api', 'number'] },
    {
      name: 'api_revisions_one_open',
      expression: `create unique index "api_revisions_one_open" on "api_revisions" ("api_id") where "status" = 'open'`,
    },
  ],
});

export type IApiRevision = InferEntity<typeof ApiRevision>;
