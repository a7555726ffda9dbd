/** Response `data` of the document and acceptance routes (documents.service.ts; the OpenAPI document shares them). */
import { z } from 'zod';
import { ACCEPTANCE_MODES, DOCUMENT_KINDS, DOCUMENT_SOURCES, DOCUMENT_STATUSES } from '../../db/entities/index.js';

/** A provider's legal document, without its body (the snapshot URL serves the text behind `content_hash`). */
export const DocumentView = z.object({
  document_id: z.string(),
  kind: z.enum(DOCUMENT_KINDS),
  source: z.enum(DOCUMENT_SOURCES),
  version: z.string(),
  title: z.string().nullable(),
  content_hash: z.string().describe('SHA-256 of the body (hex); an acceptance names it.'),
  acceptance_mode: z.enum(ACCEPTANCE_MODES),
  status: z.enum(DOCUMENT_STATUSES),
  api_id: z.string().nullable().describe('The API it governs; null: all of the provider’s APIs.'),
  snapshot_url: z.string(),
  activated_at: z.string().nullable(),
  created_at: z.string(),
});
export type DocumentView = z.infer<typeof DocumentView>;

/** An org's acceptance of one document version (the first one's time on a repeat). */
export const AcceptanceView = z.object({
  accepted: z.literal(true),
  document_id: z.string(),
  content_hash: z.string(),
  accepted_at: z.string(),
});
export type AcceptanceView = z.infer<typeof AcceptanceView>;
