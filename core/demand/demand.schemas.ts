/** Response `data` of the API-request routes (demand.service.ts ApiRequestView; the OpenAPI document shares it). */
import { z } from 'zod';

export const ApiRequestView = z.object({
  id: z.string(),
  query: z.string(),
  votes: z.number().int(),
  status: z.enum(['open', 'fulfilled']),
  fulfilled_by: z.object({ slug: z.string(), name: z.string() }).nullable(),
  created_at: z.string(),
  last_requested_at: z.string(),
});
export type ApiRequestView = z.infer<typeof ApiRequestView>;

/**
 * What became of the request's `email` (issue 31, double opt-in): `confirmed` (a verified address of the org, or one
 * its owner confirmed), `confirmation_sent` (a confirmation mail went out now), `confirmation_pending` (one went out
 * before and its link still works: no second mail); null when the request named no email.
 */
export const EMAIL_STATUSES = ['confirmed', 'confirmation_sent', 'confirmation_pending'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

/**
 * Response `meta` of POST /v1/api-requests: `notify_email` is the address that will be told (proven or confirmed),
 * else null; `email_status` and `email_note` say what happened to the email and what its owner must do.
 */
export const ApiRequestMeta = z.looseObject({
  request_id: z.string(),
  merged: z.boolean(),
  notify_email: z.string().nullable(),
  email_status: z.enum(EMAIL_STATUSES).nullable(),
  email_note: z.string().nullable(),
});

/** What the confirmation link's page shows (core/demand/email-confirmation.ts). */
export interface ConfirmationFacts {
  email: string;
  query: string;
  votes: number;
  fulfilledBy: { slug: string; name: string } | null;
  confirmedAt: Date | null;
  expiresAt: Date;
}
