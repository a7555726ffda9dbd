/** Tool results: structured content plus a text copy; domain errors become `isError` results carrying our code. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toAppError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';

export function toolOk(data: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data };
}

export function toolError(err: unknown, log: Logger): CallToolResult {
  const e = toAppError(err);
  if (e.status >= 500) log.error({ err: e.cause ?? e }, 'tool failed');
  const error = { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ ok: false, error }) }] };
}

/** Run a tool body, mapping thrown errors to an error result. */
export async function runTool(log: Logger, fn: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    return toolOk(await fn());
  } catch (err) {
    return toolError(err, log);
  }
}
