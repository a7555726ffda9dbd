/** Request body validation with zod: a clear 400 (or 415) in the envelope, never a 500. */
import type { z } from 'zod';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../../core/errors.js';
import type { AppContext } from '../context.js';

export function formatIssues(error: z.ZodError): { message: string; issues: { path: string; message: string }[] } {
  const issues = error.issues.map((i) => ({ path: i.path.join('.') || '(body)', message: i.message }));
  return { message: issues.map((i) => `${i.path}: ${i.message}`).join('; '), issues };
}

function hasBody(ctx: AppContext): boolean {
  const length = ctx.get('content-length');
  return (length !== '' && length !== '0') || ctx.get('transfer-encoding') !== '';
}

/** Parse the JSON body (an empty body counts as `{}`) against `schema`. */
export function parseBody<S extends z.ZodType>(ctx: AppContext, schema: S): z.output<S> {
  if (hasBody(ctx) && !ctx.is('application/json', '+json')) {
    throw new UnsupportedMediaTypeError('Send the request body as JSON (Content-Type: application/json).');
  }
  const parsed = schema.safeParse(ctx.request.body ?? {});
  if (!parsed.success) {
    const { message, issues } = formatIssues(parsed.error);
    throw new ValidationError(`Invalid request body: ${message}`, { details: { issues } });
  }
  return parsed.data;
}

export function parseQuery<S extends z.ZodType>(ctx: AppContext, schema: S): z.output<S> {
  const parsed = schema.safeParse(ctx.query);
  if (!parsed.success) {
    const { message, issues } = formatIssues(parsed.error);
    throw new ValidationError(`Invalid query: ${message}`, { details: { issues } });
  }
  return parsed.data;
}

/** How much of a refused upload is read and thrown away so the client can still read the 413 (issue 21 item 9). */
export const REFUSED_BODY_DRAIN = { extraBytes: 8 * 1024 * 1024, ms: 5_000 };

/**
 * Read and discard the rest of a refused upload, up to `maxBytes` or `ms`: a client (fetch, curl) writes its whole
 * body before it reads the answer, so closing the connection under it turns our 413 into a network error (EPIPE).
 * Resolves once the body has ended, or the bound is reached (the connection is then closed after the response).
 */
function drainBounded(req: AppContext['req'], maxBytes: number, ms: number): Promise<void> {
  if (req.readableEnded) return Promise.resolve();
  return new Promise<void>((resolve) => {
    let drained = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', done);
      req.off('error', done);
      req.off('close', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > maxBytes) done();
    };
    const timer = setTimeout(done, ms);
    req.on('data', onData);
    req.on('end', done);
    req.on('error', done);
    req.on('close', done);
    req.resume();
  });
}

/**
 * Read a raw (non-JSON) request body up to `limit` bytes. A larger body is refused with 413 as soon as it is known
 * (declared, or while reading), without buffering the rest: the rest is read and discarded up to a bound
 * (REFUSED_BODY_DRAIN) so an ordinary client receives the answer, and the connection is closed after the response,
 * since an unread remainder would otherwise be parsed as the next request. A body sent as JSON is refused with 415
 * (the JSON parser has consumed it).
 */
export function readRawBody(ctx: AppContext, limit: number): Promise<Buffer> {
  const req = ctx.req;
  // A JSON content type means the JSON body parser has already read the stream: waiting for it would never end.
  if (ctx.request.rawBody !== undefined || req.readableEnded) {
    return Promise.reject(
      new UnsupportedMediaTypeError(
        'This route takes the raw bytes as the request body, not JSON: send them with their own Content-Type.',
      ),
    );
  }
  const refuse = async (): Promise<never> => {
    ctx.set('Connection', 'close');
    await drainBounded(req, limit + REFUSED_BODY_DRAIN.extraBytes, REFUSED_BODY_DRAIN.ms);
    throw new PayloadTooLargeError(limit);
  };
  const declared = Number(ctx.get('content-length') || NaN);
  if (Number.isFinite(declared) && declared > limit) return refuse();
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        chunks.length = 0;
        refuse().catch(reject);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
