/**
 * The gateway driven from inside another role's process: the agent-tool server's `call_api` and `run_probe` build a
 * request in memory and hand it to the gateway's own request handler (`GatewayHandler.dispatch`) with the caller
 * already authenticated as a key, then read the response it wrote. Routing, the input rule, every check, the
 * admission, metering, refunds, idempotency and the envelope are the HTTP path's, unchanged; only the bearer step
 * and the socket are left out (an MCP caller may hold an OAuth access token acting as its key, with no plaintext key
 * to put in a header). No loopback HTTP: the request is a socketless IncomingMessage, the response a small capture.
 */
import { IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Socket } from 'node:net';
import { InternalError } from '../core/errors.js';
import type { GatewayHandler } from './app.js';
import type { GatewayCaller } from './proxy.js';
import type { ResponseSink } from './respond.js';

export interface InProcessRequest {
  method: string;
  /** The request target as it would appear on the request line: `/v1/proxy/{slug}/{path}?{query}`. */
  target: string;
  /** Lower-case header names. */
  headers?: Record<string, string>;
  body?: Buffer;
}

export interface InProcessResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: string;
}

/** Captures what sendJson writes. */
class CapturedResponse implements ResponseSink {
  statusCode = 200;
  headersSent = false;
  ended = false;
  destroyed = false;
  headers: Record<string, string> = {};
  body = '';

  writeHead(status: number, headers: OutgoingHttpHeaders): this {
    this.statusCode = status;
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined)
        this.headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    }
    this.headersSent = true;
    return this;
  }

  end(payload: string): this {
    this.body = payload;
    this.ended = true;
    return this;
  }

  destroy(): this {
    this.destroyed = true;
    return this;
  }
}

function requestOf(input: InProcessRequest): IncomingMessage {
  // A socket that never connects: nothing reads from it; the body is pushed into the message below.
  const req = new IncomingMessage(new Socket());
  req.method = input.method;
  req.url = input.target;
  req.httpVersion = '1.1';
  const headers: Record<string, string> = { host: 'in-process', ...input.headers };
  if (input.body && input.body.length > 0) {
    headers['content-length'] = String(input.body.length);
    req.push(input.body);
  }
  req.headers = headers;
  req.push(null);
  return req;
}

/**
 * A gateway another role's code can call in process: the gateway role's handler (GatewayHandler.call), or, in the
 * all-in-one, the gateway thread reached over its message port (gateway/thread.ts).
 */
export interface InProcessGateway {
  call(caller: GatewayCaller, request: InProcessRequest): Promise<InProcessResponse>;
}

/** One gateway call as `caller`, through the gateway's request handler; resolves with the response it wrote. */
export async function dispatchInProcess(
  gateway: Pick<GatewayHandler, 'dispatch'>,
  caller: GatewayCaller,
  request: InProcessRequest,
): Promise<InProcessResponse> {
  const res = new CapturedResponse();
  await gateway.dispatch(requestOf(request), res, caller);
  if (!res.ended || res.destroyed) throw new InternalError('The gateway did not complete its response.');
  return { status: res.statusCode, headers: res.headers, body: res.body };
}
