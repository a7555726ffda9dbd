/**
 * The shape of an installed API tool (issue 25 item 3, flat arguments issue 31 item 3), from its endpoint alone: its
 * MCP tool name (`<api slug>__<operationId or method_path>`, at most 64 of [A-Za-z0-9_.-], a numeric suffix on a
 * collision) and its input schemas.
 *
 * The endpoint's input comes in three places: path parameters (every `{param}` of the path template, always
 * required; a string unless the stored schema describes it), query parameters and the body. Its stored
 * `input_schema` in the import's shape (`properties` among `path`, `query`, `header`, `body`:
 * core/providers/openapi-import.ts) gives the places as they are (headers are not forwarded by the gateway, so they
 * are left out); any other schema a provider wrote is the body (or, for GET and HEAD, the query). An endpoint with
 * no stored schema (an API made in the console) takes open shapes: any query parameters, and for a method with a
 * body, any JSON body.
 *
 * - The advertised schema is FLAT (agents fill flat schemas more reliably): every path parameter, every query
 *   parameter and every property of an object body is a top-level argument. A name used in two places, or equal to
 *   one of the fixed arguments (`query`, `body`, `idempotency_key`), is prefixed by its place (`path_id`,
 *   `query_id`, `body_id`); characters outside [A-Za-z0-9_.-] become `_`. A place that is not an object schema with
 *   properties (an array or scalar body, an open query) stays one argument named after it (`query`, `body`).
 * - The GROUPED schema, `{ path?: {...}, query?: {...}, body?: ..., idempotency_key? }`, is the form tools had before
 *   issue 31; calls in it stay accepted (core/agent-tools/tool-args.ts decides which form a call uses).
 */
import { createHash } from 'node:crypto';
import type { EndpointMethod } from '../../db/entities/index.js';

export const MAX_TOOL_NAME = 64;
const QUERY_METHODS: ReadonlySet<EndpointMethod> = new Set(['GET', 'HEAD']);
const GROUPS = ['path', 'query', 'header', 'body'] as const;
export const IDEMPOTENCY_KEY = 'idempotency_key';

export interface ShapedEndpoint {
  method: EndpointMethod;
  path: string;
  operationId?: string | null;
  inputSchema?: Record<string, unknown> | null;
}

type Json = Record<string, unknown>;
export type ArgPlace = 'path' | 'query' | 'body';

/** One flat argument: where its value goes. `param` absent: the argument is the whole place (`query`, `body`). */
export interface ToolArgument {
  name: string;
  in: ArgPlace;
  param?: string;
}

export interface ToolInputSchema {
  /** The advertised, flat schema. */
  schema: Json;
  /** The grouped schema (`path`, `query`, `body`), still accepted. */
  grouped: Json;
  /** The flat arguments but `idempotency_key`, in the schema's order. */
  args: ToolArgument[];
  /** Hex SHA-256 of the flat schema's JSON: what changes when the endpoint's schema does. */
  hash: string;
}

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
  return unique(`${slug}__${operation}`, taken);
}

/** `base` (at most 64 characters), or with a `_2`, `_3`... suffix when `taken` has it. */
function unique(base: string, taken: ReadonlySet<string>): string {
  const plain = base.slice(0, MAX_TOOL_NAME);
  if (!taken.has(plain)) return plain;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const name = `${plain.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
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

/** Query parameters when the endpoint publishes no schema: any names, scalar values or lists of them. */
const OPEN_QUERY: Json = {
  type: 'object',
  additionalProperties: {
    type: ['string', 'number', 'boolean', 'null', 'array'],
    items: { type: ['string', 'number', 'boolean', 'null'] },
  },
  description: 'Query parameters (no schema published).',
};
/** The body when the endpoint publishes no schema: any JSON. */
const OPEN_BODY: Json = { description: 'JSON body (no schema published).' };

const IDEMPOTENCY_ARG: Json = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: 'The same key and request run and bill once.',
};

/** One place of the endpoint's input: its schema and whether the call must send it. */
interface Place {
  schema: Json;
  required: boolean;
}

interface Places {
  /** Each path parameter's schema (the stored one, else a string). */
  path: [string, Json | boolean][];
  /** The stored path group, as it was (the grouped schema's `path`). */
  pathGroup: unknown;
  query?: Place;
  body?: Place;
}

const requiredOf = (schema: unknown): string[] =>
  isRecord(schema) && Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : [];

/** Where the endpoint takes its input (see the file header). */
function placesOf(endpoint: ShapedEndpoint): Places {
  const stored = endpoint.inputSchema ?? null;
  const groups = groupsOf(stored);
  const queryMethod = QUERY_METHODS.has(endpoint.method);
  const described = isRecord(groups?.path) && isRecord(groups.path.properties) ? groups.path.properties : {};
  const path = pathParams(endpoint.path).map((name): [string, Json | boolean] => {
    const schema = described[name];
    return [name, isRecord(schema) || typeof schema === 'boolean' ? schema : { type: 'string' }];
  });
  if (!isRecord(stored)) {
    return { path, pathGroup: undefined, query: { schema: OPEN_QUERY, required: false }, ...openBody(queryMethod) };
  }
  if (groups) {
    const required = new Set(requiredOf(stored));
    const place = (s: unknown, name: string) => (isRecord(s) ? { schema: s, required: required.has(name) } : undefined);
    return { path, pathGroup: groups.path, query: place(groups.query, 'query'), body: place(groups.body, 'body') };
  }
  // Any other schema is the body, or the query for GET and HEAD; required when it requires a property.
  const whole = { schema: stored, required: requiredOf(stored).length > 0 };
  return queryMethod ? { path, pathGroup: undefined, query: whole } : { path, pathGroup: undefined, body: whole };
}

const openBody = (queryMethod: boolean) => (queryMethod ? {} : { body: { schema: OPEN_BODY, required: false } });

/** Keywords that make an object schema more than its properties: such a place stays one argument. */
const NOT_FLAT = [
  '$ref',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'patternProperties',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'propertyNames',
  'unevaluatedProperties',
  'minProperties',
  'maxProperties',
];

/** An object schema with at least one property and nothing that relates them: its properties can be flat. */
function flatProperties(schema: Json): Json | undefined {
  if (schema.type !== undefined && schema.type !== 'object') return undefined;
  if (!isRecord(schema.properties) || Object.keys(schema.properties).length === 0) return undefined;
  return NOT_FLAT.some((k) => k in schema) ? undefined : schema.properties;
}

interface Entry {
  arg: Omit<ToolArgument, 'name'>;
  schema: Json | boolean;
  required: boolean;
}

function entriesOf(places: Places): Entry[] {
  const entries: Entry[] = places.path.map(([param, schema]) => ({
    arg: { in: 'path', param },
    schema,
    required: true,
  }));
  for (const where of ['query', 'body'] as const) {
    const place = places[where];
    if (!place) continue;
    const properties = flatProperties(place.schema);
    if (!properties) {
      entries.push({ arg: { in: where }, schema: place.schema, required: place.required });
      continue;
    }
    const required = new Set(place.required ? requiredOf(place.schema) : []);
    for (const [param, schema] of Object.entries(properties)) {
      const s = isRecord(schema) || typeof schema === 'boolean' ? schema : {};
      entries.push({ arg: { in: where, param }, schema: s, required: required.has(param) });
    }
  }
  return entries;
}

const safeName = (text: string) => text.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, MAX_TOOL_NAME) || '_';

/** The flat names (see the file header): the plain name, else prefixed by its place, else numbered. */
function nameEntries(entries: Entry[]): ToolArgument[] {
  const fixed = new Set([IDEMPOTENCY_KEY, ...entries.filter((e) => !e.arg.param).map((e) => e.arg.in)]);
  const plain = entries.map((e) => (e.arg.param === undefined ? e.arg.in : safeName(e.arg.param)));
  const uses = new Map<string, number>();
  for (const name of plain) uses.set(name, (uses.get(name) ?? 0) + 1);
  const taken = new Set(fixed);
  return entries.map((e, i) => {
    if (e.arg.param === undefined) return { name: e.arg.in, ...e.arg };
    const name = plain[i]!;
    const clash = fixed.has(name) || uses.get(name)! > 1;
    const chosen = unique(clash ? safeName(`${e.arg.in}_${e.arg.param}`) : name, taken);
    taken.add(chosen);
    return { name: chosen, ...e.arg };
  });
}

/** A renamed argument says where it goes (a name that is the parameter's own says it already). */
function described(schema: Json | boolean, arg: ToolArgument): Json | boolean {
  if (arg.param === undefined || arg.param === arg.name || !isRecord(schema) || 'description' in schema) return schema;
  const what = arg.in === 'body' ? 'Body field' : `${arg.in === 'path' ? 'Path' : 'Query'} parameter`;
  return { ...schema, description: `${what} \`${arg.param}\`.` };
}

/** The stored schema's own definitions stay at the root, where its `$ref`s point. */
function definitionsOf(endpoint: ShapedEndpoint): Json {
  const stored = endpoint.inputSchema;
  return Object.fromEntries(['$defs', 'definitions'].flatMap((k) => (isRecord(stored?.[k]) ? [[k, stored[k]]] : [])));
}

/** The grouped schema: `path` (every template parameter, required), `query`, `body`, `idempotency_key`. */
function groupedSchema(places: Places, defs: Json): Json {
  const properties: Json = {};
  const required: string[] = [];
  if (places.path.length > 0) {
    const given = isRecord(places.pathGroup) ? places.pathGroup : {};
    properties.path = {
      ...given,
      type: 'object',
      properties: { ...(isRecord(given.properties) ? given.properties : {}), ...Object.fromEntries(places.path) },
      required: places.path.map(([name]) => name),
    };
    required.push('path');
  }
  for (const where of ['query', 'body'] as const) {
    const place = places[where];
    if (!place) continue;
    properties[where] = place.schema;
    if (place.required) required.push(where);
  }
  properties[IDEMPOTENCY_KEY] = IDEMPOTENCY_ARG;
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false, ...defs };
}

/** The tool's input schemas (see the file header). */
export function toolInputSchema(endpoint: ShapedEndpoint): ToolInputSchema {
  const places = placesOf(endpoint);
  const defs = definitionsOf(endpoint);
  const entries = entriesOf(places);
  const args = nameEntries(entries);
  const properties: Json = {};
  const required: string[] = [];
  entries.forEach((entry, i) => {
    const arg = args[i]!;
    properties[arg.name] = described(entry.schema, arg);
    if (entry.required) required.push(arg.name);
  });
  properties[IDEMPOTENCY_KEY] = IDEMPOTENCY_ARG;
  const schema: Json = {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
    ...defs,
  };
  return {
    schema,
    grouped: groupedSchema(places, defs),
    args,
    hash: createHash('sha256').update(JSON.stringify(schema)).digest('hex'),
  };
}
