/** Writing envelopes on the gateway's bare node:http responses. */
import type { ServerResponse } from 'node:http';
import { fail, ok } from '../core/envelope.js';
import type { AppError } from '../core/errors.js';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(payload);
}

export function sendOk(
  res: ServerResponse,
  requestId: string,
  data: unknown,
  meta: Record<string, unknown> = {},
): void {
  sendJson(res, 200, ok(data, requestId, meta), { 'X-Request-Id': requestId });
}

export function sendError(res: ServerResponse, requestId: string, error: AppError): void {
  sendJson(res, error.status, fail(error, requestId), { 'X-Request-Id': requestId, ...(error.headers ?? {}) });
}
