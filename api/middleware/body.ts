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

/**
 * Read a raw (non-JSON) request body up to `limit` bytes; larger bodies are refused with 413 before or while
 * reading, so memory stays bounded.
 */
export async function readRawBody(ctx: AppContext, limit: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || NaN);
  if (Number.isFinite(declared) && declared > limit) throw new PayloadTooLargeError(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      ctx.req.unpipe();
      ctx.req.resume(); // drain the rest so the connection stays usable for the 413
      throw new PayloadTooLargeError(limit);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
