/**
 * Koa ↔ the web-standard Request/Response the SDK's transport speaks (mcp/session-transport.ts says why we use that
 * transport and not the SDK's Node wrapper, which does the same conversion internally).
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { ParameterizedContext } from 'koa';

/** Headers the transport never needs: hop-by-hop ones, and credentials (tools see the principal, not the token). */
const DROPPED = new Set(['authorization', 'cookie', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

/**
 * The request as a web Request for the transport. Its body is not copied: Koa has parsed it already and the caller
 * hands the transport that (`parsedBody`). The URL is our configured endpoint, not one built from request headers.
 */
export function toWebRequest(ctx: ParameterizedContext, endpoint: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (value === undefined || DROPPED.has(name)) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const url = new URL(endpoint);
  url.search = ctx.querystring;
  return new Request(url, { method: ctx.method, headers });
}

/**
 * Write the transport's Response: status, headers, then the body as it is produced (an SSE stream stays open until
 * the transport ends it). Resolves once the response is complete or the client went away; a client leaving cancels
 * the web stream, which is how the transport learns it.
 */
export async function writeWebResponse(ctx: ParameterizedContext, response: Response): Promise<void> {
  ctx.respond = false; // Koa leaves the response to us
  const res = ctx.res;
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (!response.body) {
    res.end();
    return;
  }
  res.flushHeaders();
  try {
    await pipeline(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>), res);
  } catch {
    // The client disconnected mid-stream: pipeline destroyed the body, cancelling the transport's stream.
  }
}
