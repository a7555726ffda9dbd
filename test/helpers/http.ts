/**
 * A small HTTP client for tests: JSON in, status + headers + parsed envelope out. Every response is checked against
 * the OpenAPI document (test/helpers/openapi-validator.ts): a response the document does not describe fails the test.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../../platform/runtime/http-server.js';
import { createLogger } from '../../core/logger.js';
import { documentValidator } from './openapi-validator.js';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** Skip the OpenAPI check: only for a server that is not ours (a loopback upstream) or a deliberately broken call. */
  skipOpenApi?: boolean;
}

/** Built when this module loads, not inside a test's burst of concurrent calls (it takes ~0.1 s once). */
const validator = documentValidator();

export async function http<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  opts: RequestOptions = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | Buffer | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  if (!opts.skipOpenApi) {
    validator.validate({
      method,
      path: new URL(baseUrl + path).pathname,
      status: res.status,
      contentType: res.headers.get('content-type'),
      body: text === '' ? undefined : parsed,
    });
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** Serve a request handler on a random loopback port (or on `port`, one the stack was configured with). */
export async function serve(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  port = 0,
  name = 'test',
): Promise<RunningHttpServer> {
  return startHttpServer({
    name,
    host: '127.0.0.1',
    port,
    handler,
    logger: createLogger({ level: 'silent' }),
    graceMs: 2_000,
  });
}

/** Assert-friendly description of a response for failure messages. */
export function describe(res: HttpResult): string {
  return `${res.status} ${res.text.slice(0, 500)}`;
}

/**
 * Assert the failure envelope: the status, the code, a message, and `meta.request_id` equal to `X-Request-Id`.
 */
export function expectFailure(res: HttpResult, status: number, code: string): void {
  expect(res.status, describe(res)).toBe(status);
  expect(res.body).toEqual({
    ok: false,
    error: expect.objectContaining({ code, message: expect.any(String) }),
    meta: { request_id: expect.any(String) },
  });
  expect(res.body.meta.request_id).toBe(res.headers.get('x-request-id'));
}
