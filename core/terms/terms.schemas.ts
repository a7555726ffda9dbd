/**
 * Response `data` of the terms routes and tools (documents.service.ts, listings.service.ts `terms`/`termsStatus`; the
 * OpenAPI document shares them): a provider's document, an acceptance, a listing's terms in force.
 */
import { z } from 'zod';
import { ACCEPTANCE_MODES, DOCUMENT_KINDS, DOCUMENT_SOURCES, DOCUMENT_STATUSES } from '../../db/entities/index.js';

/** A provider's legal document (one immutable version); `snapshot_url` serves the exact text behind `content_hash`. */
export const DocumentView = z.object({
  document_id: z.string(),
  kind: z.enum(DOCUMENT_KINDS),
  source: z.enum(DOCUMENT_SOURCES),
  version: z.string(),
  title: z.string().nullable(),
  content_hash: z.string().describe('SHA-256 of the body (64 hex characters).'),
  acceptance_mode: z.enum(ACCEPTANCE_MODES).describe('`required`: calls are refused (428) until accepted.'),
  status: z.enum(DOCUMENT_STATUSES),
  api_id: z.string().nullable().describe('The API it applies to; null: every API of the provider.'),
  snapshot_url: z.string(),
  activated_at: z.string().nullable(),
  created_at: z.string(),
});
export type DocumentView = z.infer<typeof DocumentView>;

/** POST …/terms/accept: the acceptance (the first one's time on a repeat). */
export const AcceptanceView = z.object({
  accepted: z.literal(true),
  document_id: z.string(),
  content_hash: z.string(),
  accepted_at: z.string(),
});
export type AcceptanceView = z.infer<typeof AcceptanceView>;

/** GET /v1/apis/{slug}/terms: the documents in force and, with a bearer, whether the caller's org accepted each. */
export const TermsView = z.object({
  api: z.string(),
  documents: z.array(
    DocumentView.extend({ accepted: z.boolean().nullable().describe('Null when the caller is anonymous.') }),
  ),
  all_required_accepted: z.boolean().nullable().describe('Null when the caller is anonymous.'),
  approval_url: z.string().describe('Where a person reads and accepts the terms.'),
});
export type TermsView = z.infer<typeof TermsView>;

/** A document in force the caller's org still has to accept before calling (the gateway answers 428 until then). */
export const MissingDocument = DocumentView.pick({
  document_id: true,
  kind: true,
  title: true,
  version: true,
  content_hash: true,
  snapshot_url: true,
});
export type MissingDocument = z.infer<typeof MissingDocument>;

/** The terms of a live listing as a decision (the `get_api_terms_status` tool): may the caller's org call it? */
export const TermsStatusView = z.object({
  api: z.string(),
  may_call: z.boolean().describe('Every required document in force is accepted (or none is required).'),
  missing: z.array(MissingDocument).describe('Required documents in force not yet accepted by the caller’s org.'),
  optional_unaccepted: z.array(z.string()).describe('Optional documents in force not yet accepted (ids).'),
  approval_url: z.string().describe('Where a person (owner or admin, verified email) reads and accepts the terms.'),
  next_step: z.string().nullable().describe('What to do next, in one sentence; null when nothing is needed.'),
});
export type TermsStatusView = z.infer<typeof TermsStatusView>;
