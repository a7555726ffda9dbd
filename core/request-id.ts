/** Request ids: a caller's well-formed `X-Request-Id` is kept (for tracing across hops); otherwise a new `req_…`. */
import { newId } from './ids.js';

const ACCEPTABLE = /^[A-Za-z0-9][A-Za-z0-9._:-]{7,127}$/;

export function resolveRequestId(incoming: string | string[] | undefined): string {
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value && ACCEPTABLE.test(value) ? value : newId('request');
}

/** The caller's `X-Request-Id` when well formed, kept beside our own id (never used as it). */
export function clientRequestId(incoming: string | string[] | undefined): string | null {
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value && ACCEPTABLE.test(value) ? value : null;
}
