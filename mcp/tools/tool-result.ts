/**
 * Tool results: structured content (the REST `data` shape) plus a text copy; domain errors become `isError` results
 * whose text and `structuredContent.error` carry our error code, message and details (a URL a person must open, when
 * there is one, is in `details.url` or a named `details.*_url` field and repeated in the text).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { toAppError, ValidationError } from '../../core/errors.js';
import { checkJson } from '../../core/input.js';
import type { Logger } from '../../core/logger.js';

export interface ToolErrorBody {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export function toolOk(data: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data };
}

/** The error result for an error body (ours, or one the gateway answered in its envelope). */
export function toolFailure(error: ToolErrorBody): CallToolResult {
  const body = { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) };
  const urls = Object.entries(error.details ?? {})
    .filter(([name, value]) => /(^|_)url$/.test(name) && typeof value === 'string')
    .map(([name, value]) => `\n${name}: ${String(value)}`)
    .join('');
  return {
    isError: true,
    content: [
      { type: 'text', text: `${error.code}: ${error.message}${urls}\n${JSON.stringify({ ok: false, error: body })}` },
    ],
    structuredContent: { ok: false, error: body },
  };
}

export function toolError(err: unknown, log: Logger): CallToolResult {
  const e = toAppError(err);
  if (e.status >= 500) log.error({ err: e.cause ?? e }, 'tool failed');
  return toolFailure({ code: e.code, message: e.message, details: e.details });
}

/** Run a tool body, mapping thrown errors to an error result. */
export async function runTool(log: Logger, fn: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    return toolOk(await fn());
  } catch (err) {
    return toolError(err, log);
  }
}

/** The input rule (core/input.ts: no NUL, no lone surrogate) over a tool's arguments, as REST applies it to bodies. */
export function checkArgs(args: unknown): void {
  checkJson(args, 'arguments');
}

/** Parse with a REST schema whose cross-field rules a tool's input schema cannot state: 400 `validation_failed`. */
export function parseArgs<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ path: i.path.join('.') || '(arguments)', message: i.message }));
  throw new ValidationError(`Invalid arguments: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
    details: { issues },
  });
}
