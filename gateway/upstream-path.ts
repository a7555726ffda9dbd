/**
 * The upstream URL of a proxied call. The path rule it relies on (`assertSafePath`, refusing dot segments, encoded
 * slashes and backslashes) lives in core/upstream/proxy-path.ts, shared with the quote.
 */
import { ValidationError } from '../core/errors.js';

export { assertSafePath, unsafePathReason } from '../core/upstream/proxy-path.js';

/**
 * The upstream URL for a checked path: the base URL's path followed by the request's path and query, unchanged. If
 * URL parsing would alter the path in any way (normalisation, re-encoding), the request is refused rather than sent
 * somewhere else.
 */
export function upstreamUrl(origin: string, basePath: string, path: string, search: string): URL {
  const url = new URL(`${origin}${basePath}${path}${search}`);
  if (url.pathname !== basePath + path || url.origin !== origin) {
    throw new ValidationError('The path is not in canonical form; percent-encode reserved characters.', {
      details: { reason: 'unsafe_path' },
    });
  }
  return url;
}
