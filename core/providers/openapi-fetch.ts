/**
 * Fetching a provider's OpenAPI document by URL, through the SSRF guard (at most 5 MB, 10 s, 3 redirects), and
 * parsing it (openapi-import.ts): what creating a listing from a document and re-importing its endpoints share.
 * A refusal is a 400 that names the field the URL came in.
 */
import { ValidationError } from '../errors.js';
import { UpstreamRequestError, type UpstreamGuard } from '../upstream/upstream-guard.js';
import { parseOpenApiDocument, type ImportedApi } from './openapi-import.js';

export const IMPORT_LIMITS = { maxBytes: 5 * 1024 * 1024, timeoutMs: 10_000, maxRedirects: 3 } as const;

/** What a provider trying a local upstream needs to know (issue 22): the switch exists, for development only. */
export const PRIVATE_UPSTREAM_HINT =
  'For local development, start the marketplace with UPSTREAM_ALLOW_PRIVATE=true to allow loopback and private ' +
  'addresses and plain http (never in production).';

/** Re-throw a guard refusal as a 400 that names the field (and, for a private address, the development switch). */
export function forField(field: string, err: unknown): never {
  if (err instanceof UpstreamRequestError) {
    const local = err.reason === 'blocked_address' || err.reason === 'unsupported_scheme';
    throw new ValidationError(`${field}: ${err.message}${local ? ` ${PRIVATE_UPSTREAM_HINT}` : ''}`, {
      details: { field, reason: err.reason, ...(local ? { hint: PRIVATE_UPSTREAM_HINT } : {}) },
    });
  }
  throw err;
}

/** The document at `rawUrl`, parsed; `field` names the input the URL came in (for the 400s). */
export async function fetchOpenApi(
  guard: UpstreamGuard,
  rawUrl: string,
  field: string,
): Promise<{ url: string; doc: ImportedApi }> {
  const source = await guard.checkUrl(rawUrl).catch((err: unknown) => forField(field, err));
  const res = await guard
    .fetch(source.toString(), {
      ...IMPORT_LIMITS,
      headers: { accept: 'application/json, application/yaml, text/yaml;q=0.9, */*;q=0.5' },
    })
    .catch((err: unknown) => forField(field, err));
  if (res.status < 200 || res.status > 299) {
    throw new ValidationError(`${field}: the document could not be fetched (HTTP ${res.status}).`, {
      details: { field, upstream_status: res.status },
    });
  }
  return { url: source.toString(), doc: await parseOpenApiDocument(res.body.toString('utf8')) };
}
