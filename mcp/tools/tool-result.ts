/**
 * Tool results: structured content (the REST `data` shape) plus a text copy; domain errors become `isError` results
 * whose text and `structuredContent.error` carry our error code, message and details (a URL a person must open, when
 * there is one, is in `details.url` or a named `details.*_url` field and repeated in the text).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Principal, Scope } from '../../core/auth/scopes.js';
import { requireScope } from '../../core/auth/scopes.js';
import { toAppError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';

export function toolOk(data: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data };
}

export function toolError(err: unknown, log: Logger): CallToolResult {
  const e = toAppError(err);
  if (e.status >= 500) log.error({ err: e.cause ?? e }, 'tool failed');
  const error = { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) };
  return {
    isError: true,
    content: [{ type: 'text', text: `${e.code}: ${e.message}\n${JSON.stringify({ ok: false, error })}` }],
    structuredContent: { ok: false, error },
  };
}

/** Run a tool body, mapping thrown errors to an error result. */
export async function runTool(log: Logger, fn: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    return toolOk(await fn());
  } catch (err) {
    return toolError(err, log);
  }
}

/** Per-call scope check: the tool is listed to everyone; a caller without the scope gets 403 `forbidden` naming it. */
export function needScope(principal: Principal, scope: Scope): void {
  requireScope(principal, scope);
}
