/**
 * What the tools share: their output schemas, arguments checked by the REST route's own
 * schema, and a note for the person a result's URL is meant for.
 *
 * Output schemas admit the error result too. The SDK's client validates the `structuredContent` of every result
 * against the tool's output schema, error results included (client `callTool`, SDK 1.32.2), and ours carry
 * `{ ok: false, error }` there (tool-result.ts). So a schema lists the REST `data` fields as properties and says in
 * `anyOf` which ones a success requires; the server checks a success against the full shape before sending it.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { formatIssues } from '../../api/middleware/body.js';
import { ValidationError } from '../../core/errors.js';
import { PageInfo } from '../../core/pagination.js';

/** The error result's `structuredContent` (tool-result.ts `toolError`). */
const ErrorShape = {
  ok: z.literal(false).optional(),
  error: z
    .looseObject({
      code: z.string(),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
};

/**
 * A tool's output schema: `shape` is the REST route's `data` (extra fields allowed: nested parts are loose on
 * purpose), and the error result's `{ ok: false, error }` validates too.
 */
export function dataOrError(schema: Record<string, z.ZodType> | z.ZodObject) {
  const shape: Record<string, z.ZodType> = schema instanceof z.ZodObject ? schema.shape : schema;
  const data = z.looseObject(shape);
  const required = Object.entries(shape)
    .filter(([, schema]) => !schema.safeParse(undefined).success)
    .map(([key]) => key);
  const optional = Object.fromEntries(Object.entries(shape).map(([key, schema]) => [key, schema.optional()]));
  return z
    .looseObject({ ...optional, ...ErrorShape })
    .superRefine((value, ctx) => {
      if (value.ok === false) return;
      const parsed = data.safeParse(value);
      if (!parsed.success)
        for (const i of parsed.error.issues) ctx.addIssue({ code: 'custom', path: i.path, message: i.message });
    })
    .meta({ anyOf: [{ required }, { required: ['ok', 'error'] }] });
}

/** A list route's `data` array and `meta.pagination`, as one object. */
/** A page's position (core/pagination.ts), loose: a field it gains later is no output-validation error. */
export const PageInfoShape = PageInfo.loose();

/**
 * Check tool arguments with the REST route's schema (the same rules, refinements and defaults): a failure is the
 * same 400 `validation_failed` with the same `details.issues`, as an error result. `where` prefixes the paths.
 */
export function parseArgs<S extends z.ZodType>(schema: S, value: unknown, where?: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const { issues } = formatIssues(parsed.error);
  const named = where
    ? issues.map((i) => ({ ...i, path: i.path === '(body)' ? where : `${where}.${i.path}` }))
    : issues;
  throw new ValidationError(`Invalid arguments: ${named.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
    details: { issues: named },
  });
}

/** Add a plain sentence after the JSON text of a successful result (a URL a person must open, a run still going). */
export function withNote(result: CallToolResult, note: string | null | undefined): CallToolResult {
  if (!result.isError && note) result.content.push({ type: 'text', text: note });
  return result;
}
