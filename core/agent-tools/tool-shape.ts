/**
 * The shape of an installed API tool (issue 25 item 3), from its endpoint alone: its MCP tool name
 * (`<api slug>__<operationId or method_path>`, at most 64 of [A-Za-z0-9_.-], a numeric suffix on a collision) and
 * its input schema, a JSON Schema object derived from the endpoint's path parameters, query parameters and body:
 *
 *   { path?: {<param>: ...}, query?: {...}, body?: ..., idempotency_key?: string }
 *
 * An endpoint's stored `input_schema` in the import's shape (`properties` among `path`, `query`, `header`, `body`:
 * core/providers/openapi-import.ts) gives the groups as they are (headers are not forwarded by the gateway, so they
 * are left out); any other schema a provider wrote is the body (or, for GET and HEAD, the query). Every `{param}` of
 * the path template is a required path property (a string or number when the schema does not describe it).
 */
import { createHash } from 'node:crypto';
import type { EndpointMethod } from '../../db/entities/index.js';

export const MAX_TOOL_NAME = 64;
const QUERY_METHODS: ReadonlySet<EndpointMethod> = new Set(['GET', 'HEAD']);
const GROUPS = ['path', 'query', 'header', 'body'] as const;

export interface ShapedEndpoint {
  method: EndpointMethod;
  path: string;
  operationId?: string | null;
  inputSchema?: Record<string, unknown> | null;
}

type Json = Record<string, unknown>;

const isRecord = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/** Letters, digits, `_`, `.` and `-` only; runs of anything else become one `_`. */
function normalize(text: string): string {
  return text
    .replace(/[^A-Za-z0-9_.-]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^[_.-]+|[_.-]+$/g, '');
}

/** The tool name for an endpoint of `slug`, not in `taken` (a `_2`, `_3`... suffix when the plain one is). */
export function toolNameFor(slug: string, endpoint: ShapedEndpoint, taken: ReadonlySet<string>): string {
  const operation =
    normalize(endpoint.operationId ?? '') || normalize(`${endpoint.method.toLowerCase()}_${endpoint.path}`) || 'call';
  const base = `${slug}__${operation}`.slice(0, MAX_TOOL_NAME);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const name = `${base.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
    if (!taken.has(name)) return name;
  }
}

/** The `{name}` parameters of a path template, in order. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!);
}

/** The stored schema's groups when it is in the import's shape; undefined otherwise. */
function groupsOf(schema: Json | null | undefined): Json | undefined {
  if (!isRecord(schema) || !isRecord(schema.properties)) return undefined;
  const keys = Object.keys(schema.properties);
  if (keys.length === 0 || !keys.every((k) => (GROUPS as readonly string[]).includes(k))) return undefined;
  return schema.properties;
}

function pathGroup(path: string, described: unknown): Json | undefined {
  const names = pathParams(path);
  if (names.length === 0) return undefined;
  const given = isRecord(described) ? described : {};
  const properties: Json = { ...(isRecord(given.properties) ? given.properties : {}) };
  for (const name of names) properties[name] ??= { type: ['string', 'number'] };
  return { ...given, type: 'object', properties, required: names };
}

export interface ToolInputSchema {
  schema: Json;
  /** Hex SHA-256 of the schema's JSON: what changes when the endpoint's schema does. */
  hash: string;
}

/** The tool's input schema (see the file header). */
export function toolInputSchema(endpoint: ShapedEndpoint): ToolInputSchema {
  const stored = endpoint.inputSchema ?? null;
  const groups = groupsOf(stored);
  const queryMethod = QUERY_METHODS.has(endpoint.method);
  const storedRequired = new Set(
    groups && Array.isArray(stored?.required) ? stored.required.filter((r) => typeof r === 'string') : [],
  );
  const properties: Json = {};
  const required: string[] = [];
  const path = pathGroup(endpoint.path, groups?.path);
  if (path) {
    properties.path = path;
    required.push('path');
  }
  const query = groups ? groups.query : queryMethod ? stored : undefined;
  if (isRecord(query)) {
    properties.query = query;
    if (storedRequired.has('query')) required.push('query');
  }
  const body = queryMethod ? undefined : groups ? groups.body : stored;
  if (isRecord(body)) {
    properties.body = body;
    if (storedRequired.has('body')) required.push('body');
  }
  properties.idempotency_key = {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    description: 'The same key and request run and bill once.',
  };
  // The stored schema's own definitions stay at the root, where its `$ref`s point.
  const defs = Object.fromEntries(
    ['$defs', 'definitions'].flatMap((k) => (isRecord(stored?.[k]) ? [[k, stored[k]]] : [])),
  );
  const schema: Json = {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
    ...defs,
  };
  return { schema, hash: createHash('sha256').update(JSON.stringify(schema)).digest('hex') };
}
