/**
 * The provider tools' argument and output shapes (provider.tools.ts registers the tools, provider-tool-defs.ts defines
 * them): the `api_id` argument, a lifecycle step's answer, and create's and update's fields taken from the REST
 * bodies. The other outputs are the REST routes' schemas (core/providers/providers.schemas.ts).
 */
import { z } from 'zod';
import {
  CreateApiBody,
  CredentialsBody,
  EndpointInput,
  LifecycleDoneView,
  LifecycleRunningView,
  UpdateApiBody,
} from '../../core/providers/providers.schemas.js';
import { EndpointPatchBody } from '../../core/providers/endpoint-changes.schemas.js';

export const ApiId = z.string().trim().min(1).max(100);

/**
 * A lifecycle step's answer: the finished run, or (still running after the bounded wait) the workflow to wait for.
 * The REST schemas' union, as one object's fields (an output schema is an object).
 */
const done = LifecycleDoneView.shape;
const running = LifecycleRunningView.shape;
export const LifecycleOut = {
  api_id: done.api_id,
  action: done.action.optional(),
  status: z.enum([...done.status.options, running.status.value]),
  message: done.message.optional(),
  verification: done.verification.optional(),
  revision_published: done.revision_published,
  done: running.done.optional(),
  workflow_id: running.workflow_id.optional(),
  run_id: running.run_id.optional(),
};

// ---- create's arguments: the REST body, field by field, described for a model --------------------------------------

const create = CreateApiBody.shape;
export const CreateFields = z
  .object({
    name: create.name,
    slug: create.slug,
    summary: create.summary,
    base_url: create.base_url.describe('Upstream base URL; endpoint paths are appended.'),
    description: create.description,
    tags: create.tags,
    category: create.category,
    examples: create.examples.describe('Questions this API answers (searched).'),
    docs_url: create.docs_url,
    endpoints: create.endpoints.describe(
      'price_cents: integer cents per call (0 = free, default); overrides imported operations.',
    ),
    import_from: create.import_from,
  })
  .strict();

export const update = UpdateApiBody.shape;
export const credentials = CredentialsBody.shape;

// ---- provider_change_endpoints' arguments: the endpoint routes' bodies, batched ---------------------------------------

const EndpointId = z.string().max(40);
const patch = EndpointPatchBody.shape;
/** Checked in full (the REST bodies' rules) when the tool runs; listed plainly to keep tools/list small. */
const ToolPath = z.string().max(500);

export const EndpointChangeArgs = {
  add: z
    .array(EndpointInput.extend({ path: ToolPath }))
    .max(500)
    .optional(),
  update: z
    .array(
      z
        .object({ endpoint_id: EndpointId, ...patch, path: ToolPath })
        .partial({ method: true, path: true, summary: true, input_schema: true, output_schema: true })
        .strict(),
    )
    .max(500)
    .optional(),
  remove: z.array(EndpointId).max(500).optional(),
  openapi_url: z.string().max(2000).optional(),
  keep_missing: z.boolean().optional().describe('Re-import keeps endpoints the document lacks.'),
  discard_revision: z.boolean().optional(),
};
