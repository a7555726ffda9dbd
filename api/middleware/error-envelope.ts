/**
 * Renders every failure as the spec's failure envelope. Typed AppErrors keep their status and code; errors that
 * Koa or the body parser raise (invalid JSON, too large, unsupported type) and Postgres refusals of the caller's text
 * are mapped to ours; anything else is a masked 500, logged with its stack and the request id.
 */
import type { Middleware } from 'koa';
import { fail } from '../../core/envelope.js';
import {
  AppError,
  isStripeError,
  ForbiddenError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  UnauthenticatedError,
  UnsupportedMediaTypeError,
  toAppError,
  ValidationError,
} from '../../core/errors.js';
import type { AppState } from '../context.js';

interface HttpishError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  limit?: number;
  message?: string;
}

/** Map an error thrown by Koa, co-body or another HTTP library to our typed error. */
export function fromHttpError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  if (typeof err !== 'object' || err === null) return undefined;
  // A vendor client's error carries the vendor's status (Stripe's 401 for a bad secret key): not an HTTP error of
  // this request. toAppError maps it (core/errors.ts, fromPaymentProviderError).
  if (isStripeError(err)) return undefined;
  const e = err as HttpishError;
  const status = e.status ?? e.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  if (status === 413 || e.type === 'entity.too.large') return new PayloadTooLargeError(e.limit ?? 0);
  if (status === 415) return new UnsupportedMediaTypeError(e.message ?? 'Unsupported media type.');
  if (e.type === 'entity.parse.failed' || /json/i.test(e.message ?? '')) {
    return new ValidationError('Request body is not valid JSON.');
  }
  if (status === 401) return new UnauthenticatedError();
  if (status === 403) return new ForbiddenError(e.expose && e.message ? e.message : 'Forbidden.');
  if (status === 404) return new NotFoundError();
  if (status === 405) return new MethodNotAllowedError([]);
  return new ValidationError(e.expose && e.message ? e.message : 'Bad request.');
}

export function errorEnvelope(): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const appError = fromHttpError(err) ?? toAppError(err);
      if (appError.status >= 500) {
        ctx.state.log.error({ err: appError.cause ?? appError, code: appError.code }, 'request failed');
      }
      ctx.status = appError.status;
      for (const [name, value] of Object.entries(appError.headers ?? {})) ctx.set(name, value);
      ctx.body = fail(appError, ctx.state.requestId);
    }
  };
}
