/**
 * A listing's endpoint changes (issue 31; docs/decisions.md, "Providers change, version and retire their listings"):
 * the inputs of the endpoint routes and tools (zod, strict), and their answers' `data`: what changed (a draft's
 * endpoints change at once; a live listing's changes are staged in its open revision), and the revision itself.
 */
import { z } from 'zod';
import { ENDPOINT_METHODS, REVISION_STATUSES } from '../../db/entities/index.js';
import { EndpointView } from '../pricing/pricing.schemas.js';
import { EndpointInput, JsonSchemaInput, PathTemplate, VerificationEvidenceView } from './providers.schemas.js';

const EndpointId = z.string().trim().min(1).max(40);

/** PATCH …/endpoints/{endpoint_id}: summary and schemas change in place; a new method or path is a new endpoint. */
export const EndpointPatchBody = z
  .object({
    method: EndpointInput.shape.method,
    path: PathTemplate,
    summary: z.string().trim().max(200).nullable(),
    input_schema: JsonSchemaInput.nullable(),
    output_schema: JsonSchemaInput.nullable(),
  })
  .partial()
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'send at least one field to change');
export type EndpointPatchBody = z.infer<typeof EndpointPatchBody>;

/** POST …/import: the endpoints again from an OpenAPI document. */
export const ImportEndpointsBody = z
  .object({
    url: z.string().trim().min(1).max(2000),
    keep_missing: z
      .boolean()
      .default(false)
      .describe('Keep the endpoints the document no longer has (by default they are removed).'),
  })
  .strict();
export type ImportEndpointsBody = z.infer<typeof ImportEndpointsBody>;

/** Several changes at once (the agent tool): additions, changes by endpoint_id, removals by endpoint_id. */
export const EndpointChangesBody = z
  .object({
    add: z.array(EndpointInput).max(500),
    update: z.array(EndpointPatchBody.and(z.object({ endpoint_id: EndpointId }))).max(500),
    remove: z.array(EndpointId).max(500),
  })
  .partial()
  .strict();
export type EndpointChangesBody = z.infer<typeof EndpointChangesBody>;

// ---- Answers --------------------------------------------------------------------------------------------------------

/** What a removal did (or, staged, will do when the revision is published). */
export const RemovedEndpointView = z.object({
  endpoint_id: z.string(),
  method: z.enum(ENDPOINT_METHODS),
  path: z.string(),
  effect: z
    .enum(['deleted', 'removed', 'scheduled', 'staged'])
    .describe(
      'deleted: an endpoint of a never-live draft, gone; removed: gone now, its calls answer 410 endpoint_removed; ' +
        'scheduled: its calls carry Deprecation and Sunset headers until sunset_at, then answer 410; staged: in the ' +
        'open revision, announced when it is published (at once if the endpoint had no call in 30 days).',
    ),
  sunset_at: z.string().nullable(),
});
export type RemovedEndpointView = z.infer<typeof RemovedEndpointView>;

/** An endpoint a revision changes: its method and path, and only the fields that change. */
const RevisionUpdateView = z.object({
  endpoint_id: z.string(),
  method: z.enum(ENDPOINT_METHODS),
  path: z.string(),
  summary: z.string().nullable().optional(),
  input_schema: z.record(z.string(), z.unknown()).nullable().optional(),
  output_schema: z.record(z.string(), z.unknown()).nullable().optional(),
});

/** GET …/revision: a live listing's staged endpoint changes. */
export const RevisionView = z.object({
  revision_id: z.string(),
  api_id: z.string(),
  number: z.number().int(),
  status: z.enum(REVISION_STATUSES),
  add: z.array(EndpointView).describe('New endpoints, as they will be listed (ids kept when published).'),
  update: z.array(RevisionUpdateView),
  remove: z.array(z.object({ endpoint_id: z.string(), method: z.enum(ENDPOINT_METHODS), path: z.string() })),
  verification: VerificationEvidenceView.nullable().describe('The smoke test of the new and changed endpoints.'),
  created_at: z.string(),
  updated_at: z.string(),
  published_at: z.string().nullable(),
  publish_hint: z.string(),
});
export type RevisionView = z.infer<typeof RevisionView>;

/** The answer of every endpoint change: what it did to the endpoints, or what it staged in the revision. */
export const EndpointChangesView = z.object({
  api_id: z.string(),
  staged: z.boolean().describe('true: the API is live and the changes wait in its open revision until published.'),
  message: z.string(),
  added: z.array(EndpointView),
  updated: z.array(EndpointView),
  removed: z.array(RemovedEndpointView),
  revision: RevisionView.nullable(),
});
export type EndpointChangesView = z.infer<typeof EndpointChangesView>;
