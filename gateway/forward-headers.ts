/**
 * Which headers cross the gateway. A caller's request headers go to the upstream minus the hop-by-hop ones (they
 * describe the caller's connection to us, not ours to the upstream), the framing undici recomputes, and our own
 * credentials and platform headers; everything else (content-type, accept, user-agent, custom headers) passes.
 * Runs on every proxied call, so it is one pass over the object against a precomputed Set.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** RFC 9110 §7.6.1 hop-by-hop headers plus the non-standard ones clients still send. */
const HOP_BY_HOP: readonly string[] = [
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
];

const DROPPED_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  ...HOP_BY_HOP,
  // undici derives Host from the upstream origin and Content-Length from the body it sends.
  'host',
  'content-length',
  // Node already answered `100-continue` to the caller, and undici refuses the header outright.
  'expect',
  // Our credentials and platform headers: the upstream gets its own credential, and the request id is set by the
  // caller of this function.
  'authorization',
  'cookie',
  'idempotency-key',
  'x-idempotency-key',
  'x-request-id',
  // The gateway reads the body into a JSON envelope; undici does not decode, so a compressed answer would be
  // unusable, and an encoded body would make the response cap count compressed bytes (a decompression bomb).
  'accept-encoding',
  // A 304 is not a 2xx, so a conditional GET would turn a cache hit into a 502; ask for the full answer instead.
  'if-none-match',
  'if-modified-since',
]);

const DROPPED_RESPONSE_HEADERS: ReadonlySet<string> = new Set([
  ...HOP_BY_HOP,
  // The gateway frames its own response.
  'content-length',
  // An upstream must not set cookies on the gateway's domain.
  'set-cookie',
  'set-cookie2',
]);

/**
 * Header names listed in `Connection` are hop-by-hop too (RFC 9110 §7.6.1). Almost every request has no
 * Connection header or only `keep-alive`/`close`, which name no header, so those return undefined without splitting.
 */
function connectionListed(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined) return undefined;
  const joined = typeof value === 'string' ? value : value.join(',');
  const lower = joined.toLowerCase();
  if (lower === 'keep-alive' || lower === 'close' || lower === '') return undefined;
  const listed = new Set<string>();
  for (const token of lower.split(',')) {
    const name = token.trim();
    if (name !== '') listed.add(name);
  }
  return listed;
}

function isDropped(name: string, dropped: ReadonlySet<string>, listed: Set<string> | undefined): boolean {
  // HTTP/2 pseudo-headers (":authority") never belong in an HTTP/1.1 request or response.
  return dropped.has(name) || name.charCodeAt(0) === 58 || (listed !== undefined && listed.has(name));
}

/**
 * The caller's headers as they should reach the upstream. `incoming` is node:http's `req.headers` (names already
 * lower case). A repeated header node kept as an array (only `set-cookie` in practice) is joined with `, `.
 * The result has no credential and no X-Request-Id: add the upstream credential and our request id afterwards.
 */
export function forwardRequestHeaders(incoming: IncomingHttpHeaders): Record<string, string> {
  const listed = connectionListed(incoming.connection);
  const out: Record<string, string> = {};
  for (const name in incoming) {
    if (isDropped(name, DROPPED_REQUEST_HEADERS, listed)) continue;
    const value = incoming[name];
    if (value === undefined) continue;
    out[name] = typeof value === 'string' ? value : value.join(', ');
  }
  return out;
}

/**
 * The upstream's response headers that may be shown to the caller (in the envelope or a pass-through answer):
 * hop-by-hop headers, framing and cookies removed, everything else as undici parsed it.
 */
export function forwardResponseHeaders(
  upstream: Readonly<Record<string, string | string[] | undefined>>,
): Record<string, string | string[]> {
  const listed = connectionListed(upstream.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in upstream) {
    if (isDropped(name, DROPPED_RESPONSE_HEADERS, listed)) continue;
    const value = upstream[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}
