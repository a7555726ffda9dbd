/**
 * The rule for proxied paths, shared by the gateway (gateway/upstream-path.ts) and the quote
 * (GET /v1/apis/{slug}/quote). The proxied path is an attack surface: a template parameter matches any one segment,
 * and `new URL()` resolves dot segments and backslashes (and treats `%2e` as a dot), so `/items/..%2f..%2fadmin` on
 * an `/items/{id}` endpoint would reach `/admin` upstream with the provider's secret attached, billed at the cheap
 * endpoint's price.
 *
 * The rule (docs/decisions.md, "Proxied paths"): a segment that is, or decodes (once or more) to, `.` or `..`, and a
 * path that holds a backslash or a segment decoding to `/` or `\`, is refused with 400 before anything is spent; the
 * upstream URL is then built and checked to be exactly the base URL's path followed by the request's path.
 */
import { ValidationError } from '../errors.js';

/** Characters without which no path can be a traversal: most paths skip the segment scan entirely. */
const SUSPICIOUS = /[.%\\]/;
const PERCENT_BYTE = /%([0-9a-fA-F]{2})/g;
/** `%252e` needs two rounds; anything still changing after this many is refused rather than decoded further. */
const MAX_DECODE_ROUNDS = 4;

function decodeBytes(s: string): string {
  return s.replace(PERCENT_BYTE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** Why `path` may not be proxied, or undefined when it may. */
export function unsafePathReason(path: string): string | undefined {
  if (!SUSPICIOUS.test(path)) return undefined;
  if (path.includes('\\')) return 'a backslash';
  for (const segment of path.split('/')) {
    let s = segment;
    for (let round = 0; ; round++) {
      if (s === '.' || s === '..') return 'a dot segment (. or ..)';
      if (round > 0 && (s.includes('/') || s.includes('\\'))) return 'an encoded / or \\';
      if (!s.includes('%')) break;
      const decoded = decodeBytes(s);
      if (decoded === s) break;
      if (round === MAX_DECODE_ROUNDS) return 'a segment encoded too many times';
      s = decoded;
    }
  }
  return undefined;
}

/** Refuse a path that could leave its endpoint (400 `validation_failed`). */
export function assertSafePath(path: string): void {
  const reason = unsafePathReason(path);
  if (reason !== undefined) {
    throw new ValidationError(`The path may not contain ${reason}.`, { details: { reason: 'unsafe_path' } });
  }
}
