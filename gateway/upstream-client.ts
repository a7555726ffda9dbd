/**
 * The gateway's upstream client. One keep-alive undici Pool per upstream origin, created on first use. The SSRF
 * address policy is the UpstreamGuard's, enforced when a connection is opened (its lookup hook), so a DNS answer
 * that turns internal after registration is refused, and a reused connection costs no DNS at all. Redirects are
 * never followed. One deadline covers connect, headers and body; the body is counted as it arrives and the
 * connection is dropped as soon as it passes the cap, so memory stays bounded whatever the upstream sends.
 *
 * Each call is driven by a dispatch handler (gateway/upstream-call.ts); its errors are in gateway/upstream-errors.ts.
 */
import { isIP } from 'node:net';
import { Pool } from 'undici';
import { isNamedUpstream, type NamedUpstream } from '../core/upstream/named-upstream.js';
import { UpstreamGuard, type LookupAll } from '../core/upstream/upstream-guard.js';
import { UpstreamCall, type UpstreamResult } from './upstream-call.js';
import { FAILURE_MESSAGES, UpstreamCallError } from './upstream-errors.js';

export type { UpstreamResult } from './upstream-call.js';
export {
  toGatewayError,
  UpstreamCallError,
  UpstreamRateLimitedError,
  type UpstreamCallErrorOptions,
  type UpstreamCallFailure,
} from './upstream-errors.js';

/** GATEWAY_MAX_RESPONSE_BYTES' default. */
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_CONNECTIONS_PER_ORIGIN = 256;
// Used when the upstream sends no `Keep-Alive: timeout=` hint; below the 5 s that Node servers close idle sockets
// after, so we stop reusing a socket before the upstream closes it under a request.
const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 4_000;

export interface UpstreamClientOptions {
  /** UPSTREAM_ALLOW_PRIVATE: development/tests only; allows non-public addresses. */
  allowPrivate: boolean;
  /** Addresses treated as public (a test seam, as for UpstreamGuard). */
  trustedAddresses?: readonly string[];
  /** DNS resolution at connect time (default: dns.promises.lookup with all: true). */
  lookup?: LookupAll;
  /** TCP/TLS connect timeout, DNS included (default 5000). */
  connectTimeoutMs?: number;
  /** Bounds the whole call: waiting for a connection, connecting, headers and body (default 30000). */
  timeoutMs?: number;
  /** Largest response body accepted (default 10 MiB); anything larger fails with reason `too_large`. */
  maxResponseBytes?: number;
  /** Concurrent connections per upstream origin (default 256); further calls queue. */
  connectionsPerOrigin?: number;
  /** Idle keep-alive time when the upstream gives no hint (default 4000). */
  keepAliveTimeoutMs?: number;
  /** The one upstream allowed by name whatever the policy (the demo's): its origin, and paths under its prefix only. */
  named?: NamedUpstream;
}

export interface UpstreamRequest {
  /** Absolute URL: the listing's base URL joined with the caller's path and query. */
  url: URL;
  method: string;
  /** Already filtered (forwardRequestHeaders) with the upstream credential added. */
  headers: Record<string, string>;
  body?: Buffer | null;
  /** Aborting it (the caller went away) fails the call with reason `aborted` and drops the connection. */
  signal?: AbortSignal;
}

export class UpstreamClient {
  private readonly guard: UpstreamGuard;
  private readonly pools = new Map<string, Pool>();
  private readonly poolOptions: Pool.Options;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private closing: Promise<void> | undefined;
  /** The named upstream's pool when only its name let it open: its calls must stay under the name's path prefix. */
  private namedOnly: Pool | undefined;
  private readonly named: NamedUpstream | undefined;

  constructor(options: UpstreamClientOptions) {
    const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.named = options.named;
    // Only the guard's address policy and lookup hook are used; its own dispatcher stays idle.
    this.guard = new UpstreamGuard({
      allowPrivate: options.allowPrivate,
      trustedAddresses: options.trustedAddresses,
      lookup: options.lookup,
      connectTimeoutMs,
    });
    this.poolOptions = {
      connections: options.connectionsPerOrigin ?? DEFAULT_CONNECTIONS_PER_ORIGIN,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
      // Our deadline normally fires first; these keep undici from holding a socket longer than a call may last.
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      connect: { timeout: connectTimeoutMs, lookup: this.guard.connectLookup },
    };
  }

  /**
   * Send one request and read the whole answer. Resolves with any status (map non-2xx with toGatewayError);
   * rejects only with UpstreamCallError.
   */
  request(req: UpstreamRequest): Promise<UpstreamResult> {
    const started = performance.now();
    const { url, method } = req;
    const pool = this.pools.get(url.origin) ?? this.openPool(url);
    if (pool instanceof UpstreamCallError) return Promise.reject(pool);
    if (pool === this.namedOnly && !url.pathname.startsWith(this.named!.pathPrefix)) {
      return Promise.reject(
        new UpstreamCallError(
          'blocked_address',
          `Host ${url.hostname} resolves to a non-public address (only the named upstream's paths are allowed).`,
        ),
      );
    }
    // CONNECT would hand us a raw tunnel to wherever the upstream points it.
    if (method.length === 7 && method.toUpperCase() === 'CONNECT') {
      return Promise.reject(new UpstreamCallError('invalid_request', 'CONNECT is not proxied.'));
    }
    if (req.signal?.aborted) {
      return Promise.reject(new UpstreamCallError('aborted', FAILURE_MESSAGES.aborted, { cause: req.signal.reason }));
    }
    const call = new UpstreamCall(this.maxResponseBytes, method === 'HEAD', this.timeoutMs, started, req.signal);
    pool.dispatch({ path: url.pathname + url.search, method, headers: req.headers, body: req.body ?? null }, call);
    return call.promise;
  }

  /** Destroy every pool: in-flight calls fail with reason `closed`, idle sockets close at once. Idempotent. */
  close(): Promise<void> {
    if (this.closing === undefined) {
      const pools = [...this.pools.values()];
      this.pools.clear();
      this.closing = Promise.all([...pools.map((pool) => pool.destroy()), this.guard.close()]).then(() => {});
    }
    return this.closing;
  }

  /** A new pool for url's origin, or why there must be none. */
  private openPool(url: URL): Pool | UpstreamCallError {
    if (this.closing !== undefined) return new UpstreamCallError('closed', FAILURE_MESSAGES.closed);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return new UpstreamCallError('unsupported_scheme', `The URL scheme ${url.protocol} is not allowed.`);
    }
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    if (host === '') return new UpstreamCallError('invalid_url', FAILURE_MESSAGES.invalid_url);
    // Node skips the lookup hook for IP literals, and a pool never changes origin: checking the literal once here
    // is the connect-time check for it.
    // The named upstream (an IP literal) opens whatever the policy, for its path prefix only (checked per call).
    const namedOnly = isIP(host) !== 0 && !this.guard.isAllowedAddress(host);
    if (namedOnly && !isNamedUpstream(url, this.named)) {
      return new UpstreamCallError('blocked_address', `Host ${host} resolves to a non-public address.`);
    }
    const pool = new Pool(url.origin, this.poolOptions);
    this.pools.set(url.origin, pool);
    if (namedOnly) this.namedOnly = pool;
    return pool;
  }
}
