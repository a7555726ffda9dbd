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

/** Response `meta` of POST /v1/api-requests: `notify_email` is the proven address that will be told, else null. */
export const ApiRequestMeta = z.looseObject({
  request_id: z.string(),
  merged: z.boolean(),
  notify_email: z.string().nullable(),
});
