/** The gateway's request body reader: bounded by GATEWAY_MAX_REQUEST_BYTES, refused with 413 past it. */
import type { IncomingMessage } from 'node:http';
import { PayloadTooLargeError } from '../core/errors.js';

const EMPTY = Buffer.alloc(0);

/** The whole request body, refused with 413 past `limit` (declared or streamed). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(new PayloadTooLargeError(limit));
  }
  // HTTP/1.1: a request with neither Content-Length nor Transfer-Encoding has no body.
  const chunked = req.headers['transfer-encoding'] !== undefined;
  if (req.readableEnded || (!chunked && (declared === 0 || req.headers['content-length'] === undefined))) {
    req.resume();
    return Promise.resolve(EMPTY);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.resume();
        reject(new PayloadTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}
