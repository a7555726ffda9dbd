/**
 * What callers are told about retired things (issue 31; docs/decisions.md): an archived listing answers
 * `410 api_archived` everywhere (its detail and sub-resources, the quote, the gateway); a removed endpoint answers
 * `410 endpoint_removed` with the date, before any spend; an endpoint whose removal is announced answers with
 * `Deprecation` (RFC 9745: `@<unix seconds>` of the announcement) and `Sunset` (RFC 8594: an HTTP-date) headers.
 */
import { AppError } from '../../errors.js';

/** 410 `api_archived`. */
export function apiArchivedError(slug: string, archivedAt: Date | null): AppError {
  const when = archivedAt ? ` on ${archivedAt.toISOString()}` : '';
  return new AppError(
    'api_archived',
    `${slug} was archived (retired) by its provider${when}: it can no longer be called or quoted. Search the ` +
      'catalog (GET /v1/search) for another.',
    { details: { api: slug, archived_at: archivedAt?.toISOString() ?? null } },
  );
}

/** 410 `endpoint_removed`, with the date it stopped answering. */
export function endpointRemovedError(slug: string, method: string, path: string, removedAt: Date): AppError {
  return new AppError(
    'endpoint_removed',
    `${method} ${path} of ${slug} was removed by its provider on ${removedAt.toISOString()}; GET ` +
      `/v1/apis/${slug}/endpoints lists the endpoints it has now.`,
    { details: { api: slug, method, path, removed_at: removedAt.toISOString() } },
  );
}

/** The `Deprecation` and `Sunset` headers of an endpoint whose removal is announced. */
export function deprecationHeaders(announcedAt: Date, sunsetAt: Date): Record<string, string> {
  return { Deprecation: `@${Math.floor(announcedAt.getTime() / 1000)}`, Sunset: sunsetAt.toUTCString() };
}
