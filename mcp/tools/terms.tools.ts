/**
 * Terms tools: a live API's terms in force and where the caller's org stands with them (GET /v1/apis/{slug}/terms),
 * accepting them (POST /v1/apis/{slug}/terms/accept: a person's step, so a key is refused with the page to hand to
 * a person), and the provider's own documents (GET/POST /v1/provider/documents, POST …/{document_id}/activate).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { requireScope } from '../../core/auth/scopes.js';
import { AcceptTermsBody, CreateDocumentBody, ListDocumentsQuery } from '../../core/providers/providers.schemas.js';
import type { Services } from '../../core/services.js';
import type { ToolContext } from '../tool-context.js';
import { runTool } from './tool-result.js';
import { dataOrError, parseArgs, withNote } from './tool-schemas.js';

const NullableString = z.string().nullable();

const DocumentOut = {
  document_id: z.string(),
  kind: z.string(),
  source: z.string(),
  version: z.string(),
  title: NullableString,
  content_hash: z.string(),
  acceptance_mode: z.string(),
  status: z.string(),
  api_id: NullableString,
  snapshot_url: z.string(),
  activated_at: NullableString,
  created_at: z.string(),
};

const Slug = z.string().trim().min(1).max(100).describe('The API’s slug, as search_apis or get_api_details show it.');

const DocumentId = z.string().trim().min(1).max(100);

const doc = CreateDocumentBody.shape;

/** The tools' definitions, built once per process (each session registers them with its own handlers). */
const DEFS = {
  get_api_terms: {
    title: 'Get an API’s terms',
    description:
      'The legal documents (terms, privacy, …) a live API’s provider has in force, each with its version, ' +
      '`content_hash`, `acceptance_mode` (`required` ones must be accepted before calls go through) and ' +
      '`snapshot_url` (the exact text), and whether your organization has accepted each. `approval_url` is the ' +
      'page where a person accepts them. Read-only, free, no scope needed.',
    inputSchema: z.object({ slug: Slug }).strict(),
    outputSchema: dataOrError({
      api: z.string(),
      documents: z.array(z.looseObject({ ...DocumentOut, accepted: z.boolean().nullable() })),
      all_required_accepted: z.boolean().nullable(),
      approval_url: z.string(),
    }),
    annotations: {
      title: 'Get an API’s terms',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  get_api_terms_status: {
    title: 'May I call this API (terms)?',
    description:
      'Check, before calling a live API, whether its terms let your organization call it: `may_call` is false ' +
      'while a required document is not accepted (calls then fail with 428 `terms_acceptance_required`); ' +
      '`missing` lists those documents, and `approval_url` is the page a PERSON (an owner or admin of your ' +
      'organization, with a verified email) must open to accept them: an API key cannot accept. Give them the ' +
      'URL, then check again. Read-only, free, no scope needed.',
    inputSchema: z.object({ slug: Slug }).strict(),
    outputSchema: dataOrError({
      api: z.string(),
      may_call: z.boolean(),
      missing: z.array(
        z.looseObject({
          document_id: z.string(),
          kind: z.string(),
          title: NullableString,
          version: z.string(),
          content_hash: z.string(),
          snapshot_url: z.string(),
        }),
      ),
      optional_unaccepted: z.array(z.string()),
      approval_url: z.string(),
      next_step: NullableString,
    }),
    annotations: {
      title: 'May I call this API (terms)?',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  accept_api_terms: {
    title: 'Accept an API’s terms',
    description:
      'Accept, for your organization, a document in force of a live API (name it by `document_id` and its ' +
      '`content_hash` from get_api_terms, so the text accepted is the text read). This is a PERSON’s step: it ' +
      'needs a signed-in owner or admin with a verified email, so an API key (every caller of this server) is ' +
      'refused with 403 `forbidden`, and the error’s `details.approval_url` is the page to give a person to read ' +
      'and accept the terms. Then check with get_api_terms_status.',
    inputSchema: z
      .object({
        slug: Slug,
        document_id: DocumentId.optional().describe('The document to accept (`doc_…`), from get_api_terms.'),
        content_hash: AcceptTermsBody.shape.content_hash
          .optional()
          .describe('The SHA-256 of the text you accept, as get_api_terms lists it.'),
      })
      .strict(),
    outputSchema: dataOrError({
      accepted: z.literal(true),
      document_id: z.string(),
      content_hash: z.string(),
      accepted_at: z.string(),
    }),
    annotations: {
      title: 'Accept an API’s terms',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  provider_list_documents: {
    title: 'List my legal documents',
    description:
      'Your organization’s legal documents (drafts, active and superseded versions), oldest first, optionally only ' +
      'those of one API (`api_id`) or of one kind. Read-only. Needs `provider:write`.',
    inputSchema: z
      .object({
        api_id: ListDocumentsQuery.shape.api_id.describe('Only documents linked to this API of yours (`api_…`).'),
        kind: ListDocumentsQuery.shape.kind.describe('Only documents of this kind.'),
      })
      .strict(),
    outputSchema: dataOrError({ items: z.array(z.looseObject(DocumentOut)) }),
    annotations: {
      title: 'List my legal documents',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  provider_create_document: {
    title: 'Create a legal document',
    description:
      'Write a new version of a legal document (terms, privacy, …) as a draft: the markdown `body` is stored as ' +
      'is and identified by its SHA-256 `content_hash`. Linked to one of your APIs with `api_id`, else to all of ' +
      'them. Nothing changes for consumers until provider_activate_document. With `acceptance_mode: "required"`, ' +
      'consumers must accept it before their calls go through. Each call creates a new draft. Needs ' +
      '`provider:write`.',
    inputSchema: z
      .object({
        kind: doc.kind.describe('What the document is: terms, privacy, acceptable_use, sla, dpa or other.'),
        source: doc.source.describe('Where the text lives: "hosted" (the only value; the default).'),
        version: doc.version.describe('Your version label, 1-50 characters (e.g. "1.0", "2026-01").'),
        title: doc.title.describe('Title shown to consumers (up to 200 characters).'),
        body: doc.body.describe('The full text, markdown, up to 200,000 characters.'),
        api_id: doc.api_id.describe('Link it to this API of yours (`api_…`); omit or null for all your APIs.'),
        acceptance_mode: doc.acceptance_mode.describe(
          '"required": consumers must accept before calling; "optional" (default): shown only.',
        ),
      })
      .strict(),
    outputSchema: dataOrError(DocumentOut),
    annotations: {
      title: 'Create a legal document',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
  },
  provider_activate_document: {
    title: 'Activate a legal document',
    description:
      'Put a draft document into force: it supersedes the active version of the same kind for the same API (or ' +
      'for all your APIs), and a `required` one must then be accepted by every consumer organization before its ' +
      'next call goes through (calls answer 428 until then). A superseded version cannot come back (409); ' +
      'activating the active version changes nothing. Needs `provider:write`.',
    inputSchema: z
      .object({ document_id: DocumentId.describe('The draft to activate (`doc_…`), from provider_create_document.') })
      .strict(),
    outputSchema: dataOrError(DocumentOut),
    annotations: {
      title: 'Activate a legal document',
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
