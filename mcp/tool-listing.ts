/**
 * What `tools/list` advertises (issue 25, item 4). An agent's context is the scarce resource, so the listing is ours
 * rather than the SDK's: the same tools with the same input schemas, in fewer bytes.
 *
 * - Input schemas are the SDK's own JSON Schema conversion of each tool's zod schema, minus what says nothing to a
 *   client: `$schema` (draft-07 and 2020-12 read these schemas alike: no tuples, no `$ref`), the safe-integer bounds
 *   zod puts on every integer and a cents cap of 10^12 or more (no amount comes near), `additionalProperties: {}`
 *   (the default), empty `properties` below the top level, `propertyNames: {type: string}` (JSON keys are strings)
 *   and the regex zod writes beside a `format` (date-time, email) it already names; a nullable `anyOf: [T, null]` is
 *   written `type: [T, "null"]`. `additionalProperties: false` (strict inputs) and every real bound stay.
 * - Output schemas are advertised only for the tools in `ADVERTISED_OUTPUT` (the money path, where a program reads
 *   the result's fields); the others still return the same `structuredContent` (the MCP spec allows structured
 *   content without a schema) and the same JSON in the text block. The server still checks every success against the
 *   tool's full zod output schema before sending it (the SDK does, from the registration), and what is advertised is
 *   that schema's conversion, compacted and loose (`looseOutput`: no `additionalProperties: false`, so a field added
 *   later fails no client): nothing a success carries or an error result carries fails it. The error result's
 *   `ok` and `error` are admitted by the `anyOf` branch without their types repeated (`withoutErrorFields`).
 * - `execution` is left out (`taskSupport: "forbidden"` is the default); an `annotations.title` equal to the tool's
 *   `title` is left out (the top-level `title` wins).
 *
 * The listing depends on no session, so it is computed once per process and shared by every session.
 */
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { normalizeObjectSchema } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import { ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';

/** The tools whose output schema is listed: a client that acts on money reads these results' fields. */
export const ADVERTISED_OUTPUT: ReadonlySet<string> = new Set(['call_api', 'quote_call', 'get_balance']);

/** The `_meta` keys a tool that can move money carries (documented in docs/agent-tools.md). */
export const MOVES_MONEY = 'svc/moves_money';
export const PRICE = 'svc/price';

/** `_meta` for a tool that can move money: `price` says what it costs, or how to learn it. */
export function moneyMeta(price: string): Record<string, unknown> {
  return { [MOVES_MONEY]: true, [PRICE]: price };
}

const SAFE = Number.MAX_SAFE_INTEGER;
const HUGE_CENTS = 1e12;

/** A JSON Schema without what tells a client nothing (see the file header). Returns a new object. */
export function compactJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(compactJsonSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const nullable = orNull(schema as Record<string, unknown>);
  if (nullable) return compactJsonSchema(nullable);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (key === '$schema') continue;
    if (key === 'minimum' && value === -SAFE) continue;
    if (key === 'maximum' && value === SAFE) continue;
    // 10^12 cents ($10 billion) or more: a cap no amount comes near (core's Cents), as empty as 2^53.
    if (key === 'maximum' && typeof value === 'number' && value >= HUGE_CENTS) continue;
    if (key === 'additionalProperties' && isEmptyObject(value)) continue;
    if (key === 'properties' && isEmptyObject(value)) continue;
    if (key === 'propertyNames' && isStringType(value)) continue;
    // zod spells `format: date-time` and `format: email` out as long patterns too; the format says it.
    if (key === 'pattern' && typeof (schema as { format?: unknown }).format === 'string') continue;
    // `properties` maps names to schemas: its keys are names, never keywords.
    out[key] =
      key === 'properties' && value && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).map(([name, s]) => [name, compactJsonSchema(s)]))
        : compactJsonSchema(value);
  }
  return out;
}

/**
 * `{anyOf: [{type: T, ...}, {type: "null"}], ...}` as `{type: [T, "null"], ...}` (zod's `.nullable()`): the same
 * values in either draft, in fewer bytes. Undefined when the schema is not of that form.
 */
function orNull(schema: Record<string, unknown>): Record<string, unknown> | undefined {
  const { anyOf, ...rest } = schema;
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return undefined;
  const [first, second] = anyOf as Record<string, unknown>[];
  if (!first || !second || Object.keys(second).join() !== 'type' || second.type !== 'null') return undefined;
  if (typeof first.type !== 'string' || 'anyOf' in first || 'const' in first || 'enum' in first) return undefined;
  if (Object.keys(rest).some((k) => k in first)) return undefined;
  return { ...rest, ...first, type: [first.type, 'null'] };
}

function isEmptyObject(value: unknown): boolean {
  return !!value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0;
}

function isStringType(value: unknown): boolean {
  return (
    !!value &&
    typeof value === 'object' &&
    Object.keys(value).join() === 'type' &&
    (value as { type?: unknown }).type === 'string'
  );
}

/**
 * An output schema without `additionalProperties: false` (a field the server adds later must not fail a client that
 * validates with today's listing; tool-schemas.ts keeps the top level loose for the same reason) and without the
 * `type` beside a `const` (the constant says it).
 */
export function looseOutput(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(looseOutput);
  if (schema === null || typeof schema !== 'object') return schema;
  const record = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (key === 'additionalProperties' && value === false) continue;
    if (key === 'type' && 'const' in record) continue;
    out[key] =
      key === 'properties' && value && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).map(([name, s]) => [name, looseOutput(s)]))
        : looseOutput(value);
  }
  return out;
}

/**
 * An output schema's error branch without its fields' schemas: `anyOf` still admits `{ ok, error }` (the error
 * result every tool shares, documented once: docs/agent-tools.md "Errors"), and the top level, loose, lets its
 * fields through; their types need not be repeated in every listed output schema.
 */
function withoutErrorFields(schema: unknown): unknown {
  const { properties, anyOf } = schema as { properties?: Record<string, unknown>; anyOf?: unknown };
  const admitsError = Array.isArray(anyOf) && anyOf.some((a) => JSON.stringify(a) === ERROR_BRANCH);
  if (!admitsError || !properties) return schema;
  const { ok: _ok, error: _error, ...rest } = properties;
  return { ...(schema as object), properties: rest };
}
const ERROR_BRANCH = JSON.stringify({ required: ['ok', 'error'] });

function jsonSchemaOf(schema: RegisteredTool['inputSchema'], io: 'input' | 'output'): Tool['inputSchema'] {
  const object = normalizeObjectSchema(schema);
  if (!object) return { type: 'object', properties: {} };
  const compact = compactJsonSchema(toJsonSchemaCompat(object, { strictUnions: true, pipeStrategy: io }));
  const json = io === 'output' ? withoutErrorFields(looseOutput(compact)) : compact;
  // A tool without parameters still lists `properties: {}` (clients read the top level's properties).
  return { properties: {}, ...(json as object), type: 'object' };
}

/** The advertised definition of one registered tool. */
export function toolDefinition(name: string, tool: RegisteredTool): Tool {
  const annotations = tool.annotations ? { ...tool.annotations } : undefined;
  if (annotations && annotations.title === tool.title) delete annotations.title;
  const definition: Tool = {
    name,
    ...(tool.title ? { title: tool.title } : {}),
    ...(tool.description ? { description: tool.description } : {}),
    inputSchema: jsonSchemaOf(tool.inputSchema, 'input'),
    ...(annotations ? { annotations } : {}),
    ...(tool._meta ? { _meta: tool._meta } : {}),
  };
  if (tool.outputSchema && ADVERTISED_OUTPUT.has(name)) {
    definition.outputSchema = jsonSchemaOf(tool.outputSchema, 'output');
  }
  return definition;
}

/**
 * Record every tool registered on `server` from now on, so `advertise` can list them. (McpServer keeps its registry
 * private; `registerTool` returns each entry, and this keeps them.)
 */
export function recordTools(server: McpServer): Map<string, RegisteredTool> {
  const tools = new Map<string, RegisteredTool>();
  const register = server.registerTool.bind(server) as (...args: unknown[]) => RegisteredTool;
  server.registerTool = ((...args: unknown[]) => {
    const tool = register(...args);
    tools.set(args[0] as string, tool);
    return tool;
  }) as McpServer['registerTool'];
  return tools;
}

/**
 * Answer `tools/list` on `server` with `listing()` (called once per request; memoise it across sessions). Call after
 * the tools are registered: the SDK installs its own handler with the first tool, and this one replaces it.
 */
export function advertise(server: McpServer, listing: () => Tool[]): void {
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing() }));
}
