/** The response envelope every control-plane, gateway and agent-tool JSON response uses (spec: Response envelope). */
import type { AppError } from './errors.js';

export interface Meta {
  request_id: string;
  [key: string]: unknown;
}

export interface SuccessEnvelope<T> {
  ok: true;
  data: T;
  meta: Meta;
}

export interface FailureEnvelope {
  ok: false;
  error: { code: string; message: string; details?: Record<string, unknown> };
  meta: { request_id: string };
}

export type Envelope<T> = SuccessEnvelope<T> | FailureEnvelope;

export function ok<T>(data: T, requestId: string, extraMeta: Record<string, unknown> = {}): SuccessEnvelope<T> {
  return { ok: true, data, meta: { request_id: requestId, ...extraMeta } };
}

export function fail(error: AppError, requestId: string): FailureEnvelope {
  return {
    ok: false,
    error: {
      code: error.code,
      message: error.message,
      ...(error.details === undefined ? {} : { details: error.details }),
    },
    meta: { request_id: requestId },
  };
}
