/** Writing envelopes on the gateway's bare node:http responses. */
import type { OutgoingHttpHeaders } from 'node:http';
import { fail, ok } from '../core/envelope.js';
import type { AppError } from '../core/errors.js';

/**
 * What the gateway writes a response to: a node `ServerResponse`, or the in-process capture the agent-tool server
 * uses (gateway/in-process.ts). Every gateway response is written through writeJson, so this is all it needs.
 */
export interface ResponseSink {
  readonly headersSent: boolean;
  statusCode: number;
  writeHead(status: number, headers: OutgoingHttpHeaders): unknown;
  end(payload: string): unknown;
  destroy(): unknown;
}

const CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * One JSON payload with the gateway's headers. The header object is one literal (no spreads); `extra` (an error's
 * Retry-After, …) is copied over it only when given.
 */
function writeJson(
  res: ResponseSink,
  status: number,
  payload: string,
  requestId: string | undefined,
  extra: Readonly<Record<string, string>> | undefined,
): void {
  const headers: OutgoingHttpHeaders = {
    'Content-Type': CONTENT_TYPE,
    'Content-Length': Buffer.byteLength(payload),
    'Cache-Control': 'no-store',
  };
  if (requestId !== undefined) headers['X-Request-Id'] = requestId;
  if (extra !== undefined) for (const name in extra) headers[name] = extra[name];
  res.writeHead(status, headers);
  res.end(payload);
}

export function sendJson(res: ResponseSink, status: number, body: unknown, headers?: Record<string, string>): void {
  writeJson(res, status, JSON.stringify(body), undefined, headers);
}

export function sendOk(res: ResponseSink, requestId: string, data: unknown, meta: Record<string, unknown> = {}): void {
  writeJson(res, 200, JSON.stringify(ok(data, requestId, meta)), requestId, undefined);
}

/**
 * A success envelope `{"ok":true,"data":<dataJson>,"meta":<meta>}` whose data is already JSON text (a proxied
 * upstream's own bytes, gateway/envelope-data.ts): spliced in, never parsed or re-serialised.
 */
export function sendOkJson(
  res: ResponseSink,
  requestId: string,
  dataJson: string,
  meta: unknown,
  headers?: Readonly<Record<string, string>>,
): void {
  const metaJson = meta === undefined ? '' : `,"meta":${JSON.stringify(meta)}`;
  writeJson(res, 200, `{"ok":true,"data":${dataJson}${metaJson}}`, requestId, headers);
}

export function sendError(res: ResponseSink, requestId: string, error: AppError): void {
  writeJson(res, error.status, JSON.stringify(fail(error, requestId)), requestId, error.headers);
}
