/**
 * The gateway's upstream errors: why a call failed (UpstreamCallError, 502 `upstream_error`, or 503
 * `upstream_not_allowed` for an upstream the address policy refuses), the upstream's own 429
 * (UpstreamRateLimitedError), how an undici or socket error is classified, and a non-2xx answer's gateway error.
 */
import { AppError, type AppErrorOptions } from '../core/errors.js';
import { findUpstreamError, type UpstreamFailureReason } from '../core/upstream/upstream-guard.js';
import type { UpstreamResult } from './upstream-call.js';

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

/**
 * A failed upstream call or a non-2xx answer: 502 `upstream_error`, `details: { reason, upstream_status? }`; an upstream
 * the address policy refuses: 503 `upstream_not_allowed` (below).
 */
export class UpstreamCallError extends AppError {
  readonly reason: UpstreamCallFailure;
  readonly upstreamStatus: number | undefined;
  /** The full story, for the gateway's log only. */
  readonly internalMessage: string;

  constructor(reason: UpstreamCallFailure, message: string, options: UpstreamCallErrorOptions = {}) {
    const { upstreamStatus, ...rest } = options;
    // A refused address is the marketplace's policy, not the provider's server failing (issue 31): 503
    // `upstream_not_allowed`, saying so without describing the provider's network (the gateway logs the real reason,
    // `internalMessage`; the provider's console and analytics say what to fix).
    const refused = reason === 'blocked_address';
    const publicReason = refused ? 'upstream_not_allowed' : reason;
    super(refused ? 'upstream_not_allowed' : 'upstream_error', refused ? NOT_ALLOWED_MESSAGE : message, {
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

/** What a consumer is told when the address policy refuses a listing's upstream. */
export const NOT_ALLOWED_MESSAGE =
  "This API's upstream is not reachable under this marketplace's address policy, so the call was not made and " +
  'nothing was charged; its provider can see the problem and how to fix it in their console.';

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

export const FAILURE_MESSAGES: Record<UpstreamCallFailure, string> = {
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

/** Only on the failure path, so clarity over speed. `status` is 0 until the response headers arrived. */
export function classify(err: unknown, status: number): UpstreamCallError {
  const upstreamStatus = status === 0 ? undefined : status;
  // The guard's own error anywhere in a cause chain (net and undici wrap errors raised in the lookup hook).
  const guardError = findUpstreamError(err);
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
