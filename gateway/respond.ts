/** Writing envelopes on the gateway's bare node:http responses. */
import type { OutgoingHttpHeaders } from 'node:http';
import { fail, ok } from '../core/envelope.js';
import type { AppError } from '../core/errors.js';

/**
 * What the gateway writes a response to: a node `ServerResponse`, or the in-process capture the agent-tool server
 * uses (gateway/in-process.ts). Every gateway response is written through sendJson, so this is all it needs.
 */
export interface ResponseSink {
  readonly headersSent: boolean;
  statusCode: number;
  writeHead(status: number, headers: OutgoingHttpHeaders): unknown;
  end(payload: string): unknown;
  destroy(): unknown;
}

export function sendJson(res: ResponseSink, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(payload);
}

export function sendOk(res: ResponseSink, requestId: string, data: unknown, meta: Record<string, unknown> = {}): void {
  sendJson(res, 200, ok(data, requestId, meta), { 'X-Request-Id': requestId });
}

export function sendError(res: ResponseSink, requestId: string, error: AppError): void {
  sendJson(res, error.status, fail(error, requestId), { 'X-Request-Id': requestId, ...(error.headers ?? {}) });
}
