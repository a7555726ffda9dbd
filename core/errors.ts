/**
 * Typed domain errors and the one table that maps each kind to its HTTP status and wire code.
 * The wire codes are the spec's strings (and `upstream_not_allowed`, issue 31: a listing's upstream the address
 * policy refuses, so the marketplace, not the provider's server, is why the call cannot be made). Two wire codes legitimately appear under two statuses
 * (`validation_failed` for 400 and 413, `internal_error` for 500 and 503), so the table is keyed by kind.
 * Class names are stable: Temporal's nonRetryableErrorTypes match them.
 */

export const ERROR_KINDS = {
  validation_failed: { status: 400, code: 'validation_failed' },
  unauthenticated: { status: 401, code: 'unauthenticated' },
  per_call_limit_exceeded: { status: 402, code: 'per_call_limit_exceeded' },
  insufficient_budget: { status: 402, code: 'insufficient_budget' },
  daily_cap_exceeded: { status: 402, code: 'daily_cap_exceeded' },
  payment_required: { status: 402, code: 'payment_required' },
  forbidden: { status: 403, code: 'forbidden' },
  not_found: { status: 404, code: 'not_found' },
  method_not_allowed: { status: 405, code: 'method_not_allowed' },
  conflict: { status: 409, code: 'conflict' },
  api_archived: { status: 410, code: 'api_archived' },
  endpoint_removed: { status: 410, code: 'endpoint_removed' },
  payload_too_large: { status: 413, code: 'validation_failed' },
  unsupported_media_type: { status: 415, code: 'unsupported_media_type' },
  idempotency_mismatch: { status: 422, code: 'idempotency_key_reused' },
  verification_failed: { status: 422, code: 'verification_failed' },
  terms_acceptance_required: { status: 428, code: 'terms_acceptance_required' },
  rate_limited: { status: 429, code: 'rate_limited' },
  upstream_rate_limited: { status: 429, code: 'upstream_rate_limited' },
  internal: { status: 500, code: 'internal_error' },
  upstream_error: { status: 502, code: 'upstream_error' },
  payment_provider_error: { status: 502, code: 'payment_provider_error' },
  unavailable: { status: 503, code: 'internal_error' },
  upstream_not_allowed: { status: 503, code: 'upstream_not_allowed' },
} as const satisfies Record<string, { status: number; code: string }>;

export type ErrorKind = keyof typeof ERROR_KINDS;
export type ErrorCode = (typeof ERROR_KINDS)[ErrorKind]['code'];

export interface AppErrorOptions {
  details?: Record<string, unknown>;
  cause?: unknown;
  /** Extra response headers (Retry-After, WWW-Authenticate). */
  headers?: Record<string, string>;
}

export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly status: number;
  readonly code: ErrorCode;
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(kind: ErrorKind, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.kind = kind;
    this.status = ERROR_KINDS[kind].status;
    this.code = ERROR_KINDS[kind].code;
    this.details = options.details;
    this.headers = options.headers;
  }

  /** Safe to retry the same request later (rate limits, unavailable dependencies). */
  get retryable(): boolean {
    return this.status === 429 || this.status === 503;
  }
}

type KindErrorClass = new (message: string, options?: AppErrorOptions) => AppError;
type DefaultedKindErrorClass = new (message?: string, options?: AppErrorOptions) => AppError;

/** The AppError class of one kind, taking the caller's message (or `fallback` when it gives none). */
function kindError(kind: ErrorKind): KindErrorClass;
function kindError(kind: ErrorKind, fallback: string): DefaultedKindErrorClass;
function kindError(kind: ErrorKind, fallback?: string): KindErrorClass {
  return class extends AppError {
    constructor(message = fallback ?? '', options?: AppErrorOptions) {
      super(kind, message, options);
    }
  };
}

export class ValidationError extends kindError('validation_failed') {}
export class UnauthenticatedError extends kindError('unauthenticated', 'A valid bearer token is required.') {}
export class ForbiddenError extends kindError('forbidden') {}
export class NotFoundError extends kindError('not_found', 'Not found.') {}
export class MethodNotAllowedError extends AppError {
  constructor(allowed: string[]) {
    super('method_not_allowed', `Method not allowed. Allowed: ${allowed.join(', ')}.`, {
      details: { allowed },
      headers: { Allow: allowed.join(', ') },
    });
  }
}
export class ConflictError extends kindError('conflict') {}
export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number, what = 'Request body') {
    super('payload_too_large', `${what} is larger than the ${limitBytes}-byte limit.`, {
      details: { limit_bytes: limitBytes },
    });
  }
}
export class UnsupportedMediaTypeError extends kindError('unsupported_media_type') {}
export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number, message = 'Too many requests; slow down.') {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    super('rate_limited', message, {
      details: { retry_after_seconds: seconds },
      headers: { 'Retry-After': String(seconds) },
    });
  }
}
export class PaymentRequiredError extends kindError('payment_required') {}
export class ServiceUnavailableError extends kindError('unavailable') {}
/** The payment provider (Stripe) refused a request for a reason that is not the caller's (docs/decisions.md). */
export class PaymentProviderError extends kindError('payment_provider_error') {}
export class InternalError extends kindError('internal', 'Internal error.') {}

/**
 * Postgres refusing text it cannot store: 22021 character_not_in_repertoire (NUL in a text parameter), 22P05
 * untranslatable_character (\u0000 in jsonb), and 08P01 "invalid message format" for a statement that carries a NUL
 * (MikroORM inlines parameters into the statement, whose wire form ends at the first NUL; the error message quotes the
 * statement, so the NUL shows there). The input rule (core/input.ts) refuses such text at the edge; this is the
 * backstop for text that reaches the database another way, so it is still a 400 and never a 500.
 */
function isBadTextDatabaseError(e: { code?: unknown; message?: unknown }): boolean {
  if (e.code === '22021' || e.code === '22P05') return true;
  return e.code === '08P01' && typeof e.message === 'string' && e.message.includes('\u0000');
}

/** The 400 for a database error caused by the caller's text, or undefined. Looks through `cause` chains. */
export function fromDatabaseError(err: unknown): ValidationError | undefined {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    if (isBadTextDatabaseError(e)) {
      return new ValidationError('Text must not contain NUL characters or unpaired UTF-16 surrogates.', { cause: err });
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Socket-level failures of a client connection (the database or Redis is down or restarting). */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTCONN']);

/**
 * Postgres being unreachable rather than the request being wrong: class 08 connection exceptions (except the NUL case
 * above), 57P01-57P03 (shutdown, crash recovery, cannot connect now), a refused or reset socket, a closed connection,
 * or a pool that could not hand out a connection in time.
 */
/** Stripe's client errors that mean "Stripe is unreachable or failing right now" (by their `type`, no vendor import). */
function isStripeUnavailable(e: { type?: unknown; statusCode?: unknown }): boolean {
  if (e.type === 'StripeConnectionError' || e.type === 'StripeRateLimitError') return true;
  return e.type === 'StripeAPIError' && (typeof e.statusCode !== 'number' || e.statusCode >= 500);
}

function isUnavailableError(e: { code?: unknown; message?: unknown; type?: unknown; statusCode?: unknown }): boolean {
  if (isStripeUnavailable(e)) return true;
  // gRPC UNAVAILABLE (14): the Temporal server cannot be reached (the client's ServiceError carries it as its cause).
  if (e.code === 14) return true;
  const code = typeof e.code === 'string' ? e.code : '';
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03') return true;
  if (UNREACHABLE_CODES.has(code)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return /Connection terminated|Client has encountered a connection error|Timeout acquiring a connection|Failed to connect before the deadline|the database system is (starting up|shutting down|in recovery mode)/i.test(
    message,
  );
}

/** The 503 for a dependency that is down (the caller may retry), or undefined. Looks through `cause` chains. */
export function fromUnavailableError(err: unknown): ServiceUnavailableError | undefined {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    if (isUnavailableError(e)) {
      return new ServiceUnavailableError('A service this request needs is unavailable; retry shortly.', {
        cause: err,
        headers: { 'Retry-After': '1' },
      });
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A Stripe client error, told by its `type` (`StripeAuthenticationError`, ...) with no vendor import. */
export function isStripeError(e: unknown): e is { type: string; statusCode?: number; message?: string } {
  return typeof e === 'object' && e !== null && typeof (e as { type?: unknown }).type === 'string'
    ? /^Stripe[A-Za-z]*Error$/.test((e as { type: string }).type)
    : false;
}

/**
 * Stripe refusing us (not "down", which is the 503 above): a declined card is the payer's 402; anything else (a bad
 * or revoked secret key, missing permissions, an invalid request we built) is the operator's problem, never the
 * caller's: 502 `payment_provider_error`, logged with Stripe's own message by the error middleware. Stripe's 401
 * in particular must never reach a person as their own `unauthenticated`.
 */
export function fromPaymentProviderError(err: unknown): AppError | undefined {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    if (isStripeError(e)) {
      if (e.type === 'StripeCardError') {
        return new PaymentRequiredError(`The card was declined: ${e.message ?? 'no reason given'}`, { cause: err });
      }
      return new PaymentProviderError(
        'The payment provider refused this request; the operator has been told. Try again later.',
        { cause: err },
      );
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Normalise anything thrown into an AppError: a caller's bad text is 400, a dependency that is down is 503, and any
 * other unknown error a masked 500 (the cause keeps the original).
 */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return (
    fromDatabaseError(err) ??
    fromUnavailableError(err) ??
    fromPaymentProviderError(err) ??
    new InternalError('An unexpected error occurred.', { cause: err })
  );
}
