import { describe, expect, it } from 'vitest';
import { fromHttpError } from '../../api/middleware/error-envelope.js';
import { fail, ok } from '../../core/envelope.js';
import {
  AppError,
  ERROR_KINDS,
  InternalError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  RateLimitedError,
  toAppError,
  ValidationError,
} from '../../core/errors.js';

// The spec's error table (Errors section), row by row.
const SPEC_TABLE: [number, string][] = [
  [401, 'unauthenticated'],
  [402, 'per_call_limit_exceeded'],
  [402, 'insufficient_budget'],
  [402, 'daily_cap_exceeded'],
  [402, 'payment_required'],
  [403, 'forbidden'],
  [404, 'not_found'],
  [413, 'validation_failed'],
  [428, 'terms_acceptance_required'],
  [429, 'rate_limited'],
  [429, 'upstream_rate_limited'],
  [502, 'upstream_error'],
  [503, 'internal_error'],
];

describe('error table', () => {
  it.each(SPEC_TABLE)('has a kind for %i %s', (status, code) => {
    const kinds = Object.values(ERROR_KINDS).filter((k) => k.status === status && k.code === code);
    expect(kinds).toHaveLength(1);
  });

  it('derives status and code from the kind', () => {
    for (const [kind, { status, code }] of Object.entries(ERROR_KINDS)) {
      const e = new AppError(kind as keyof typeof ERROR_KINDS, 'x');
      expect([e.status, e.code]).toEqual([status, code]);
    }
  });

  it('keeps class names stable (Temporal matches them)', () => {
    expect(new ValidationError('x').name).toBe('ValidationError');
    expect(new PayloadTooLargeError(10).name).toBe('PayloadTooLargeError');
  });

  it('masks unknown errors as a 500 internal_error and keeps the cause', () => {
    const cause = new Error('db password is hunter2');
    const e = toAppError(cause);
    expect(e).toBeInstanceOf(InternalError);
    expect([e.status, e.code]).toEqual([500, 'internal_error']);
    expect(e.message).not.toContain('hunter2');
    expect(e.cause).toBe(cause);
  });

  it('turns Stripe being unreachable, rate limited or failing into 503 with Retry-After, not 500', async () => {
    const Stripe = (await import('stripe')).default;
    const { StripeConnectionError, StripeAPIError, StripeRateLimitError, StripeInvalidRequestError } = Stripe.errors;
    for (const err of [
      new StripeConnectionError({ message: 'connect ECONNRESET' }),
      new StripeRateLimitError({ message: 'slow down' }),
      new StripeAPIError({ message: 'oops', statusCode: 502 }),
    ]) {
      const app = toAppError(err);
      expect(app.status, err.type).toBe(503);
      expect(app.headers).toMatchObject({ 'Retry-After': '1' });
    }
    // Stripe refusing what we sent is the operator's problem: 502 payment_provider_error (issue 22), not a 500.
    const refused = toAppError(new StripeInvalidRequestError({ message: 'No such customer' }));
    expect([refused.status, refused.code]).toEqual([502, 'payment_provider_error']);
  });

  it("never reports Stripe's 401 (our key refused) as the caller's, nor a declined card as ours", async () => {
    const Stripe = (await import('stripe')).default;
    const { StripeAuthenticationError, StripeCardError } = Stripe.errors;
    const auth = new StripeAuthenticationError({ message: 'Invalid API Key provided', statusCode: 401 });
    expect(fromHttpError(auth)).toBeUndefined();
    expect([toAppError(auth).status, toAppError(auth).code]).toEqual([502, 'payment_provider_error']);
    const declined = toAppError(new StripeCardError({ message: 'Your card was declined.', statusCode: 402 }));
    expect([declined.status, declined.code]).toEqual([402, 'payment_required']);
    expect(declined.message).toContain('Your card was declined.');
  });

  it('turns an unreachable Temporal server (gRPC UNAVAILABLE) into 503, not 500', async () => {
    const { ServiceError } = await import('@temporalio/client');
    const grpc = Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14 });
    expect(toAppError(new ServiceError('Failed to start workflow', { cause: grpc })).status).toBe(503);
    expect(toAppError(new Error('Failed to connect before the deadline')).status).toBe(503);
  });

  it('carries Retry-After and Allow headers', () => {
    expect(new RateLimitedError(2.2).headers).toEqual({ 'Retry-After': '3' });
    expect(new MethodNotAllowedError(['GET']).headers).toEqual({ Allow: 'GET' });
  });

  it('marks only 429 and 503 as retryable', () => {
    expect(new RateLimitedError(1).retryable).toBe(true);
    expect(new ValidationError('x').retryable).toBe(false);
  });
});

describe('envelope', () => {
  it('shapes success and failure', () => {
    expect(ok({ a: 1 }, 'req_1', { cost_cents: 2 })).toEqual({
      ok: true,
      data: { a: 1 },
      meta: { request_id: 'req_1', cost_cents: 2 },
    });
    expect(fail(new ValidationError('bad', { details: { field: 'x' } }), 'req_2')).toEqual({
      ok: false,
      error: { code: 'validation_failed', message: 'bad', details: { field: 'x' } },
      meta: { request_id: 'req_2' },
    });
    expect(fail(new ValidationError('bad'), 'req_3').error).not.toHaveProperty('details');
  });
});
