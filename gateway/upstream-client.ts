/**
 * The gateway's upstream client. One keep-alive undici Pool per upstream origin, created on first use. The SSRF
 * address policy is the UpstreamGuard's, enforced when a connection is opened (its lookup hook), so a DNS answer
 * that turns internal after registration is refused, and a reused connection costs no DNS at all. Redirects are
 * never followed. One deadline covers connect, headers and body; the body is counted as it arrives and the
 * connection is dropped as soon as it passes the cap, so memory stays bounded whatever the upstream sends.
 *
 * Each call is driven by a dispatch handler instead of undici.request(): no Readable stream, async iterator or
 * signal plumbing per call, just one object holding the call's state and a timer.
 */
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import { AppError, type AppErrorOptions } from '../core/errors.js';
import {
  UpstreamGuard,
  UpstreamRequestError,
  type LookupAll,
  type UpstreamFailureReason,
} from '../core/upstream/upstream-guard.js';

/** GATEWAY_MAX_RESPONSE_BYTES' default. */
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_CONNECTIONS_PER_ORIGIN = 256;
// Used when the upstream sends no `Keep-Alive: timeout=` hint; below the 5 s that Node servers close idle sockets
// after, so we stop reusing a socket before the upstream closes it under a request.
const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 4_000;

export type UpstreamCallFailure =
  | Exclude<UpstreamFailureReason, 'too_many_redirects'>
  | 'tls_failed'
  | 'reset'
  | 'protocol_error'
  | 'aborted'
  | 'closed'
  | 'invalid_request'
  | 'bad_status';

export interface UpstreamCallErrorOptions extends AppErrorOptions {
  /** The upstream's status when its headers had arrived before the failure. */
  upstreamStatus?: number;
}

/** A failed upstream call or a non-2xx answer: 502 `upstream_error`, `details: { reason, upstream_status? }`. */
export class UpstreamCallError extends AppError {
  readonly reason: UpstreamCallFailure;
  readonly upstreamStatus: number | undefined;
  /** The full story, for the gateway's log only. */
  readonly internalMessage: string;

  constructor(reason: UpstreamCallFailure, message: string, options: UpstreamCallErrorOptions = {}) {
    const { upstreamStatus, ...rest } = options;
    // A refused address is the provider's network layout: consumers are told only that the upstream could not be
    // reached; the gateway logs the real reason (`reason`, and the message in `internalMessage`).
    const hidden = reason === 'blocked_address';
    const publicReason = hidden ? 'connect_failed' : reason;
    super('upstream_error', hidden ? FAILURE_MESSAGES.connect_failed : message, {
      ...rest,
      details:
        upstreamStatus === undefined
          ? { ...rest.details, reason: publicReason }
          : { ...rest.details, reason: publicReason, upstream_status: upstreamStatus },
    });
    this.internalMessage = message;
    this.reason = reason;
    this.upstreamStatus = upstreamStatus;
  }
}

/** The upstream answered 429: 429 `upstream_rate_limited`, with its Retry-After passed on when it is valid. */
export class UpstreamRateLimitedError extends AppError {
  constructor(retryAfter: string | string[] | undefined, nowMs: number = Date.now()) {
    const value = typeof retryAfter === 'string' ? retryAfter.trim() : retryAfter?.[0]?.trim();
    const seconds = value === undefined ? undefined : retryAfterSeconds(value, nowMs);
    super('upstream_rate_limited', 'The upstream API is rate limiting requests; retry later.', {
      details:
        seconds === undefined ? { upstream_status: 429 } : { upstream_status: 429, retry_after_seconds: seconds },
      // An unparsable value is dropped rather than relayed: callers act on this header.
      headers: seconds === undefined ? undefined : { 'Retry-After': value! },
    });
  }
}

/** Retry-After is delta-seconds or an HTTP-date (RFC 9110 §10.2.3); undefined for anything else. */
function retryAfterSeconds(value: string, nowMs: number): number | undefined {
  if (/^\d{1,10}$/.test(value)) return Number(value);
  // Every HTTP-date form starts with a day name; Date.parse alone would also take "-5" or "1.5" as dates.
  if (!/^[A-Za-z]{3}/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

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

export interface UpstreamResult {
  status: number;
  /** As undici parsed them: lower-case names, repeated headers as arrays. */
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  contentType: string | undefined;
  /** From the call to the end of the body. */
  latencyMs: number;
}

const FAILURE_MESSAGES: Record<UpstreamCallFailure, string> = {
  invalid_url: 'The upstream URL is not valid.',
  unsupported_scheme: 'The upstream URL scheme is not allowed.',
  blocked_address: 'The upstream host resolves to a non-public address.',
  dns_failed: 'The upstream host could not be resolved.',
  connect_failed: 'Could not connect to the upstream.',
  timeout: 'The upstream did not answer in time.',
  too_large: 'The upstream response is too large.',
  tls_failed: 'The TLS handshake with the upstream failed.',
  reset: 'The upstream closed the connection before the response was complete.',
  protocol_error: 'The upstream sent an invalid HTTP response.',
  aborted: 'The upstream request was aborted.',
  closed: 'The upstream client is shutting down.',
  invalid_request: 'The request cannot be sent upstream.',
  bad_status: 'The upstream answered with an error status.',
};

const CODE_REASONS: ReadonlyMap<string, UpstreamCallFailure> = new Map<string, UpstreamCallFailure>([
  ['UND_ERR_CONNECT_TIMEOUT', 'timeout'],
  ['UND_ERR_HEADERS_TIMEOUT', 'timeout'],
  ['UND_ERR_BODY_TIMEOUT', 'timeout'],
  ['UND_ERR_RES_EXCEEDED_MAX_SIZE', 'too_large'],
  ['ECONNREFUSED', 'connect_failed'],
  ['EHOSTUNREACH', 'connect_failed'],
  ['ENETUNREACH', 'connect_failed'],
  ['EHOSTDOWN', 'connect_failed'],
  ['ENETDOWN', 'connect_failed'],
  ['EADDRNOTAVAIL', 'connect_failed'],
  ['ETIMEDOUT', 'connect_failed'],
  ['ECONNRESET', 'reset'],
  ['ECONNABORTED', 'reset'],
  ['EPIPE', 'reset'],
  ['UND_ERR_SOCKET', 'reset'],
  ['UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 'reset'],
  ['ENOTFOUND', 'dns_failed'],
  ['EAI_AGAIN', 'dns_failed'],
  ['EAI_NONAME', 'dns_failed'],
  ['EAI_FAIL', 'dns_failed'],
  ['EPROTO', 'tls_failed'],
  ['UND_ERR_INVALID_ARG', 'invalid_request'],
  ['UND_ERR_NOT_SUPPORTED', 'invalid_request'],
  ['UND_ERR_REQ_CONTENT_LENGTH_MISMATCH', 'invalid_request'],
  ['UND_ERR_DESTROYED', 'closed'],
  ['UND_ERR_CLOSED', 'closed'],
  ['UND_ERR_ABORTED', 'aborted'],
]);

/** The guard's own error anywhere in a cause chain (net and undici wrap errors raised in the lookup hook). */
function findGuardError(err: unknown): UpstreamRequestError | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof UpstreamRequestError) return current;
    current = current.cause;
  }
  return undefined;
}

/** Only on the failure path, so clarity over speed. `status` is 0 until the response headers arrived. */
function classify(err: unknown, status: number): UpstreamCallError {
  const upstreamStatus = status === 0 ? undefined : status;
  const guardError = findGuardError(err);
  if (guardError !== undefined) {
    const reason = guardError.reason === 'too_many_redirects' ? 'connect_failed' : guardError.reason;
    return new UpstreamCallError(reason, guardError.message, { cause: err, upstreamStatus });
  }
  const raw = (err as { code?: unknown } | null)?.code;
  const code = typeof raw === 'string' ? raw : '';
  let reason = CODE_REASONS.get(code);
  if (reason === undefined) {
    if (code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || code.includes('CERT')) reason = 'tls_failed';
    else if (code.startsWith('HPE_')) reason = 'protocol_error';
    // Whatever else broke before any response was a failure to get through; after it, the exchange broke off.
    else reason = status === 0 ? 'connect_failed' : 'reset';
  }
  return new UpstreamCallError(reason, FAILURE_MESSAGES[reason], { cause: err, upstreamStatus });
}

/**
 * One call's state and undici's dispatch handler for it. Everything that can end the call (completion, an undici
 * error, the deadline, the caller's signal, the size cap) goes through `fail`/`onResponseEnd`, and the first one
 * wins. The object doubles as the signal's listener (handleEvent) and the timer's argument, so no closures are made.
 */
class UpstreamCall implements Dispatcher.DispatchHandler {
  readonly promise: Promise<UpstreamResult>;
  private resolve!: (result: UpstreamResult) => void;
  private reject!: (err: UpstreamCallError) => void;
  private readonly maxBytes: number;
  private readonly bodyless: boolean;
  private readonly timeoutMs: number;
  private readonly started: number;
  private readonly signal: AbortSignal | undefined;
  private readonly timer: NodeJS.Timeout;
  private controller: Dispatcher.DispatchController | null = null;
  private failure: UpstreamCallError | null = null;
  private settled = false;
  private status = 0;
  private headers: Record<string, string | string[] | undefined> | null = null;
  private readonly chunks: Buffer[] = [];
  private received = 0;

  constructor(maxBytes: number, head: boolean, timeoutMs: number, started: number, signal: AbortSignal | undefined) {
    this.maxBytes = maxBytes;
    this.bodyless = head;
    this.timeoutMs = timeoutMs;
    this.started = started;
    this.signal = signal;
    this.promise = new Promise<UpstreamResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.timer = setTimeout(UpstreamCall.onDeadline, timeoutMs, this);
    signal?.addEventListener('abort', this, { once: true });
  }

  private static onDeadline(this: void, call: UpstreamCall): void {
    call.fail(
      new UpstreamCallError('timeout', `The upstream did not answer within ${call.timeoutMs} ms.`, {
        upstreamStatus: call.upstreamStatus(),
      }),
    );
  }

  /** The caller's AbortSignal fired. */
  handleEvent(): void {
    this.fail(
      new UpstreamCallError('aborted', FAILURE_MESSAGES.aborted, {
        cause: this.signal?.reason,
        upstreamStatus: this.upstreamStatus(),
      }),
    );
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // The deadline or the caller may have ended the call while it waited for a connection.
    if (this.failure !== null) {
      controller.abort(this.failure);
      return;
    }
    this.controller = controller;
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    // 1xx informational answers (103 Early Hints) precede the real one.
    if (this.settled || statusCode < 200) return;
    this.status = statusCode;
    this.headers = headers;
    // A HEAD, 204 or 304 answer has no body, whatever length it declares for the representation.
    if (this.bodyless || statusCode === 204 || statusCode === 304) return;
    const declared = headers['content-length'];
    if (typeof declared === 'string' && Number(declared) > this.maxBytes) this.fail(this.tooLarge());
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    const received = this.received + chunk.length;
    if (received > this.maxBytes) {
      this.fail(this.tooLarge());
      return;
    }
    this.received = received;
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    const chunks = this.chunks;
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.received);
    const headers = this.headers ?? {};
    const contentType = headers['content-type'];
    this.finish();
    this.resolve({
      status: this.status,
      headers,
      body,
      contentType: typeof contentType === 'string' ? contentType : contentType?.[0],
      latencyMs: performance.now() - this.started,
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    if (this.settled) return;
    // undici has already torn the request down; there is nothing left to abort.
    this.controller = null;
    this.fail(classify(err, this.status));
  }

  onRequestUpgrade(_controller: Dispatcher.DispatchController, _statusCode: number, _h: unknown, socket: Duplex): void {
    socket.destroy();
    this.fail(new UpstreamCallError('protocol_error', 'The upstream switched protocols.'));
  }

  private upstreamStatus(): number | undefined {
    return this.status === 0 ? undefined : this.status;
  }

  private tooLarge(): UpstreamCallError {
    return new UpstreamCallError('too_large', `The upstream response is larger than the ${this.maxBytes}-byte limit.`, {
      upstreamStatus: this.upstreamStatus(),
      details: { limit_bytes: this.maxBytes },
    });
  }

  private fail(err: UpstreamCallError): void {
    if (this.settled) return;
    this.failure = err;
    this.finish();
    const controller = this.controller;
    if (controller !== null) {
      this.controller = null;
      // Destroys the socket mid-exchange (it cannot be reused), which also stops the upstream's writes.
      controller.abort(err);
    }
    this.reject(err);
  }

  private finish(): void {
    this.settled = true;
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this);
    this.chunks.length = 0;
  }
}

export class UpstreamClient {
  private readonly guard: UpstreamGuard;
  private readonly pools = new Map<string, Pool>();
  private readonly poolOptions: Pool.Options;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private closing: Promise<void> | undefined;

  constructor(options: UpstreamClientOptions) {
    const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
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
    if (isIP(host) !== 0 && !this.guard.isAllowedAddress(host)) {
      return new UpstreamCallError('blocked_address', `Host ${host} resolves to a non-public address.`);
    }
    const pool = new Pool(url.origin, this.poolOptions);
    this.pools.set(url.origin, pool);
    return pool;
  }
}

/**
 * The gateway error for a non-2xx answer, undefined for 2xx: 429 → UpstreamRateLimitedError (Retry-After passed
 * on), anything else, 3xx included since redirects are not followed, → UpstreamCallError `bad_status` with
 * `details.upstream_status`.
 */
export function toGatewayError(
  result: Pick<UpstreamResult, 'status' | 'headers'>,
  nowMs: number = Date.now(),
): AppError | undefined {
  const { status } = result;
  if (status >= 200 && status < 300) return undefined;
  if (status === 429) return new UpstreamRateLimitedError(result.headers['retry-after'], nowMs);
  const message =
    status >= 300 && status < 400
      ? `The upstream answered ${status}; redirects are not followed.`
      : `The upstream answered ${status}.`;
  return new UpstreamCallError('bad_status', message, { upstreamStatus: status });
}
