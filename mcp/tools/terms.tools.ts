/**
 * Terms tools: a live API's terms in force and where the caller's org stands with them (GET /v1/apis/{slug}/terms),
 * accepting them (POST /v1/apis/{slug}/terms/accept: a person's step, so a key is refused with the page to hand to
 * a person), and the provider's own documents (GET/POST /v1/provider/documents, POST …/{document_id}/activate).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { requireScope } from '../../core/auth/scopes.js';
import { AcceptTermsBody, CreateDocumentBody, ListDocumentsQuery } from '../../core/providers/providers.schemas.js';
import { AcceptanceView, DocumentView, TermsStatusView, TermsView } from '../../core/terms/terms.schemas.js';
import type { Services } from '../../platform/services.js';
import type { ToolContext } from '../tool-context.js';
import { runTool } from './tool-result.js';
import { dataOrError, parseArgs, withNote } from './tool-schemas.js';

const Slug = z.string().trim().min(1).max(100);

const DocumentId = z.string().trim().min(1).max(100);

const doc = CreateDocumentBody.shape;

/** The tools' definitions, built once per process (each session registers them with its own handlers). */
const DEFS = {
  get_api_terms: {
    title: 'API terms',
    description:
      "An API's legal documents in force: version, `content_hash`, `acceptance_mode`, `snapshot_url`, whether your " +
      'org accepted each; `approval_url`.',
    inputSchema: z.object({ slug: Slug }).strict(),
    outputSchema: dataOrError(TermsView),
    annotations: {
      title: 'API terms',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  get_api_terms_status: {
    title: 'Terms status',
    description:
      'May your org call this API under its terms? `may_call`, `missing` documents, and `approval_url` where a ' +
      'person accepts.',
    inputSchema: z.object({ slug: Slug }).strict(),
    outputSchema: dataOrError(TermsStatusView),
    annotations: {
      title: 'Terms status',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  accept_api_terms: {
    title: 'Accept terms',
    description:
      "A person's step: an API key is always refused (forbidden), with `details.approval_url` to give a person.",
    inputSchema: z
      .object({
        slug: Slug,
        document_id: DocumentId.optional(),
        content_hash: AcceptTermsBody.shape.content_hash.optional(),
      })
      .strict(),
    outputSchema: dataOrError(AcceptanceView),
    annotations: {
      title: 'Accept terms',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  provider_list_documents: {
    title: 'My documents',
    description: "Your org's legal documents (drafts, active, superseded), by API or kind.",
    inputSchema: z
      .object({
        api_id: ListDocumentsQuery.shape.api_id,
        kind: ListDocumentsQuery.shape.kind,
      })
      .strict(),
    outputSchema: dataOrError({ items: z.array(DocumentView) }),
    annotations: {
      title: 'My documents',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  provider_create_document: {
    title: 'New document',
    description:
      'A new draft of a legal document (markdown `body`); nothing changes until ' + 'provider_activate_document.',
    inputSchema: z
      .object({
        kind: doc.kind,
        source: doc.source,
        version: doc.version,
        title: doc.title,
        body: doc.body,
        api_id: doc.api_id.describe('Omit or null: all your APIs.'),
        acceptance_mode: doc.acceptance_mode.describe('required: consumers must accept before calling.'),
      })
      .strict(),
    outputSchema: dataOrError(DocumentView),
    annotations: {
      title: 'New document',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
  },
  provider_activate_document: {
    title: 'Activate document',
    description:
      'Put a draft in force, superseding the active one; consumers must accept a `required` one before their next ' +
      'call.',
    inputSchema: z.object({ document_id: DocumentId }).strict(),
    outputSchema: dataOrError(DocumentView),
    annotations: {
      title: 'Activate document',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
};

export function registerTermsTools(server: McpServer, services: Services, ctx: ToolContext): void {
  server.registerTool('get_api_terms', DEFS.get_api_terms, ({ slug }) =>
    runTool(ctx.log, async () => ({ ...(await services.listings.terms(slug, ctx.principal)) })),
  );

  server.registerTool('get_api_terms_status', DEFS.get_api_terms_status, async ({ slug }) => {
    const result = await runTool(ctx.log, async () => ({
      ...(await services.listings.termsStatus(slug, ctx.principal)),
    }));
    return withNote(result, (result.structuredContent as { next_step?: string | null } | undefined)?.next_step);
  });

  server.registerTool('accept_api_terms', DEFS.accept_api_terms, ({ slug, document_id, content_hash }) =>
    runTool(ctx.log, async () => {
      // The caller is checked before the arguments: a key learns where a person accepts, whatever it named.
      const body = document_id !== undefined && content_hash !== undefined ? { document_id, content_hash } : undefined;
      return { ...(await services.documents.acceptForListing(ctx.principal, slug, body)) };
    }),
  );

  server.registerTool('provider_list_documents', DEFS.provider_list_documents, (args) =>
    runTool(ctx.log, async () => {
      requireScope(ctx.principal, 'provider:write');
      return { items: await services.documents.list(ctx.principal, parseArgs(ListDocumentsQuery, args)) };
    }),
  );

  server.registerTool('provider_create_document', DEFS.provider_create_document, (args) =>
    runTool(ctx.log, async () => {
      requireScope(ctx.principal, 'provider:write');
      return { ...(await services.documents.create(ctx.principal, parseArgs(CreateDocumentBody, args))) };
    }),
  );

  server.registerTool('provider_activate_document', DEFS.provider_activate_document, ({ document_id }) =>
    runTool(ctx.log, async () => {
      requireScope(ctx.principal, 'provider:write');
      return { ...(await services.documents.activate(ctx.principal, document_id)) };
    }),
  );
}
