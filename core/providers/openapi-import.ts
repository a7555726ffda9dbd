/**
 * Import a provider's API listing from an OpenAPI 3.0 / 3.1 document (JSON or YAML text, or a parsed object):
 * one marketplace endpoint per operation, with its input and output JSON schemas.
 * The document is untrusted: nothing here touches the file system or the network, and every step that could
 * expand the document (YAML aliases, $ref inlining) runs against a byte budget so a small input cannot blow up.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { JSON_SCHEMA, load as loadYaml } from 'js-yaml';
import { type AppErrorOptions, ValidationError } from '../errors.js';
import { BAD_TEXT_MESSAGE, checkJson } from '../input.js';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];
/** Plain JSON. $refs are inlined; a circular schema refers to itself through `$defs` at the schema's root. */
export type JsonSchema = Record<string, unknown>;

export interface ImportedEndpoint {
  method: HttpMethod;
  /** The OpenAPI path template, e.g. '/forecast/{city}' (servers' base paths are NOT prefixed). */
  path: string;
  /** Operation summary, else the first line of its description, else null; trimmed, at most 200 characters. */
  summary: string | null;
  operation_id: string | null;
  /**
   * `{type:'object', properties:{path?, query?, header?, body?}, required?}` or null when the operation takes no
   * input. Each parameter group is `{type:'object', properties, required?}`. Cookie parameters are ignored.
   */
  input_schema: JsonSchema | null;
  /** Schema of the first 2xx response (explicit codes ascending, then 2XX; else `default`) with JSON content. */
  output_schema: JsonSchema | null;
}

export interface ImportedApi {
  openapi_version: string;
  title: string | null;
  version: string | null;
  description: string | null;
  /** Server URLs as written, variables substituted with their defaults. */
  servers: string[];
  /** Sorted by path, then by the order of HTTP_METHODS. */
  endpoints: ImportedEndpoint[];
}

export const MAX_IMPORT_OPERATIONS = 500;
/** Largest document accepted, measured as its JSON serialisation (after YAML aliases are expanded). */
export const MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;
/** Largest single input or output schema once $refs are inlined (a "$ref bomb" stops here, early). */
export const MAX_ENDPOINT_SCHEMA_BYTES = 1024 * 1024;
/** Budget for all endpoint schemas together: a few shared schemas can legitimately fan out, but not without bound. */
export const MAX_EXPANDED_SCHEMA_BYTES = 16 * 1024 * 1024;

const MAX_SUMMARY_CHARS = 200;
// Deep enough for any real schema with its $refs inlined; shallow enough that the recursive walks (here and in the
// parser) cannot overflow the stack.
const MAX_DEPTH = 512;
// The parser's own guard for its dereference crawl, so a pathological document fails instead of hanging.
const PARSER_TIMEOUT_MS = 5_000;
// The OpenAPI spec says these header parameters are ignored (they come from content negotiation and security).
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

export class OpenApiImportError extends ValidationError {
  constructor(message: string, options?: Pick<AppErrorOptions, 'details' | 'cause'>) {
    super(message, options);
    // Stable even if class names are mangled: callers and Temporal match on it.
    this.name = 'OpenApiImportError';
  }
}

type ParserDocument = Awaited<ReturnType<typeof SwaggerParser.dereference>>;
type JsonObject = Record<string, unknown>;

/**
 * Parse JSON or YAML text (or an already-parsed object) into an ImportedApi. Refuses with OpenApiImportError:
 * unparseable text, anything but OpenAPI 3.0.x / 3.1.x, validation failures, external $refs, documents larger than
 * MAX_DOCUMENT_BYTES, zero operations and more than MAX_IMPORT_OPERATIONS operations.
 */
export async function parseOpenApiDocument(source: string | object): Promise<ImportedApi> {
  const parsed = typeof source === 'string' ? parseText(source) : source;
  if (!isRecord(parsed)) throw new OpenApiImportError('The OpenAPI document must be a JSON or YAML object.');
  // A bounded deep copy: the caller's object is never mutated (the parser dereferences in place), and alias bombs or
  // cyclic objects are refused here, before anything expands them.
  const doc = cloneJson(parsed, new Budget(MAX_DOCUMENT_BYTES, documentTooLarge)) as JsonObject;

  const openapiVersion = checkVersion(doc);
  refuseBadText(doc);
  refuseExternalRefs(doc);
  const api = await validateAndDereference(doc);

  const operations = listOperations(api);
  if (operations.length === 0) {
    throw new OpenApiImportError('The OpenAPI document has no operations under `paths`; there is nothing to import.');
  }
  if (operations.length > MAX_IMPORT_OPERATIONS) {
    throw new OpenApiImportError(
      `The OpenAPI document has ${operations.length} operations; at most ${MAX_IMPORT_OPERATIONS} can be imported.`,
      { details: { operations: operations.length, limit: MAX_IMPORT_OPERATIONS } },
    );
  }

  const budget = new Budget(MAX_EXPANDED_SCHEMA_BYTES, () => {
    throw new OpenApiImportError(
      `The endpoint schemas together expand to more than ${MAX_EXPANDED_SCHEMA_BYTES} bytes once $refs are ` +
        'inlined; simplify the document.',
      { details: { limit_bytes: MAX_EXPANDED_SCHEMA_BYTES } },
    );
  });
  // Names for the $defs that circular schemas turn into.
  const componentNames = new Map<object, string>();
  for (const [name, schema] of Object.entries(asRecord(asRecord(api.components)?.schemas) ?? {})) {
    if (typeof schema === 'object' && schema !== null && !componentNames.has(schema)) componentNames.set(schema, name);
  }
  const endpoints = operations.map((op) => toEndpoint(op, componentNames, budget));
  endpoints.sort(
    (a, b) => compareStrings(a.path, b.path) || HTTP_METHODS.indexOf(a.method) - HTTP_METHODS.indexOf(b.method),
  );

  const info = asRecord(api.info);
  return {
    openapi_version: openapiVersion,
    title: asString(info?.title) ?? null,
    version: asString(info?.version) ?? null,
    description: asString(info?.description) ?? null,
    servers: serverUrls(api.servers),
    endpoints,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Text, version and reference checks (before the parser sees anything)

function parseText(text: string): unknown {
  if (Buffer.byteLength(text, 'utf8') > MAX_DOCUMENT_BYTES) documentTooLarge();
  const body = text.replace(/^\uFEFF/, '');
  if (body.trim() === '') throw new OpenApiImportError('The OpenAPI document is empty.');
  let jsonError: string | null = null;
  if (/^\s*[{[]/.test(body)) {
    try {
      return JSON.parse(body) as unknown;
    } catch (err) {
      // YAML is a superset of JSON, so a lenient YAML read still gets a chance; the JSON message is the useful one.
      jsonError = errorMessage(err);
    }
  }
  try {
    // JSON-compatible schema: no custom tags, no timestamps or other types that JSON cannot represent.
    return loadYaml(body, { schema: JSON_SCHEMA });
  } catch (err) {
    const message =
      jsonError === null ? `not valid YAML: ${firstLine(errorMessage(err))}` : `not valid JSON: ${jsonError}`;
    throw new OpenApiImportError(`The OpenAPI document is ${message}`);
  }
}

function checkVersion(doc: JsonObject): string {
  if (doc.swagger !== undefined) {
    throw new OpenApiImportError(
      'Swagger 2.0 documents are not supported; convert it to OpenAPI 3 ' +
        '(for example with swagger2openapi or editor.swagger.io) and import the result.',
      { details: { swagger: doc.swagger } },
    );
  }
  const version = doc.openapi;
  if (typeof version !== 'string' || !/^3\.[01]\.\d+$/.test(version)) {
    throw new OpenApiImportError(
      version === undefined
        ? 'This is not an OpenAPI document: the `openapi` version field is missing.'
        : `Unsupported OpenAPI version ${JSON.stringify(version)}; only 3.0.x and 3.1.x can be imported.`,
    );
  }
  return version;
}

/**
 * The input rule (core/input.ts) over every key and string of the document: its titles, summaries and schemas are
 * stored in Postgres, which refuses NUL in text and jsonb and rejects a lone surrogate's escape in jsonb.
 */
function refuseBadText(doc: JsonObject): void {
  try {
    checkJson(doc, 'document');
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    throw new OpenApiImportError(`The OpenAPI document has text that ${BAD_TEXT_MESSAGE}.`, {
      details: err.details,
    });
  }
}

/** Only local references ('#/…') are allowed: resolving any other one would mean reading a file or a URL. */
function refuseExternalRefs(doc: JsonObject): void {
  const stack: { value: unknown; pointer: string }[] = [{ value: doc, pointer: '#' }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, pointer } = item;
    if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push({ value: v, pointer: `${pointer}/${i}` }));
    } else if (isRecord(value)) {
      const ref = value.$ref;
      if (typeof ref === 'string' && !ref.startsWith('#')) {
        throw new OpenApiImportError(
          `External $ref ${JSON.stringify(ref)} at ${pointer} is not allowed: only local references ("#/...") ` +
            'are supported. Bundle the document into a single file first.',
          { details: { ref, at: pointer } },
        );
      }
      for (const [key, v] of Object.entries(value))
        stack.push({ value: v, pointer: `${pointer}/${escapePointer(key)}` });
    }
  }
}

const PARSER_SAFETY = {
  // External refs were refused above; these make sure the parser could not follow one anyway.
  resolve: { external: false, file: false, http: false },
  timeoutMs: PARSER_TIMEOUT_MS,
} satisfies SwaggerParser.Options;

async function validateAndDereference(doc: JsonObject): Promise<JsonObject> {
  try {
    // Validate the raw document (the OpenAPI meta-schemas accept Reference objects) rather than a dereferenced one:
    // the validator walks every path of what it gets, and shared $refs would make that walk exponential.
    await SwaggerParser.validate(structuredClone(doc) as ParserDocument, {
      ...PARSER_SAFETY,
      dereference: { excludedPathMatcher: () => true },
    });
    // Circular schemas become object cycles (SchemaCopier turns them back into $refs). Not `circular: 'ignore'`:
    // in that mode the parser re-walks every shared object, which is exponential on a document whose schemas
    // reference each other in layers (a "$ref bomb", see the tests), and blocks the event loop until it times out.
    const api: unknown = await SwaggerParser.dereference(doc as ParserDocument, {
      ...PARSER_SAFETY,
      dereference: { circular: true },
    });
    if (!isRecord(api)) throw new Error('The parser returned no document.');
    return api;
  } catch (err) {
    const lines = errorMessage(err)
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && l !== 'Swagger schema validation failed.');
    const first = lines[0] ?? 'unknown error';
    throw new OpenApiImportError(`Invalid OpenAPI document: ${first}`, {
      details: { errors: lines.slice(0, 10) },
      cause: err,
    });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Operations → endpoints

interface Operation {
  method: HttpMethod;
  path: string;
  pathItem: JsonObject;
  operation: JsonObject;
}

function listOperations(api: JsonObject): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(asRecord(api.paths) ?? {})) {
    const pathItem = asRecord(item);
    // Keys that are not paths are extensions (x-…); TRACE has no marketplace method and is skipped.
    if (!path.startsWith('/') || !pathItem) continue;
    for (const method of HTTP_METHODS) {
      const operation = asRecord(pathItem[method.toLowerCase()]);
      if (operation) out.push({ method, path, pathItem, operation });
    }
  }
  return out;
}

function toEndpoint(op: Operation, componentNames: ReadonlyMap<object, string>, total: Budget): ImportedEndpoint {
  const copier = (kind: 'input' | 'output'): SchemaCopier => {
    const budget = new Budget(
      MAX_ENDPOINT_SCHEMA_BYTES,
      () => {
        throw new OpenApiImportError(
          `The ${kind} schema of ${op.method} ${op.path} expands to more than ${MAX_ENDPOINT_SCHEMA_BYTES} bytes ` +
            'once $refs are inlined; simplify the document.',
          { details: { method: op.method, path: op.path, limit_bytes: MAX_ENDPOINT_SCHEMA_BYTES } },
        );
      },
      total,
    );
    return new SchemaCopier(componentNames, budget);
  };
  return {
    method: op.method,
    path: op.path,
    summary: summarize(op.operation),
    operation_id: asString(op.operation.operationId) ?? null,
    input_schema: inputSchema(op, copier('input')),
    output_schema: outputSchema(op.operation, copier('output')),
  };
}

function summarize(operation: JsonObject): string | null {
  const summary = asString(operation.summary)?.trim();
  const text =
    summary ||
    (asString(operation.description) ?? '')
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '');
  if (!text) return null;
  return text.length > MAX_SUMMARY_CHARS ? `${text.slice(0, MAX_SUMMARY_CHARS - 1).trimEnd()}…` : text;
}

type ParamLocation = 'path' | 'query' | 'header';

function inputSchema(op: Operation, copier: SchemaCopier): JsonSchema | null {
  // Path-level parameters first; an operation-level one with the same name and location replaces it in place.
  const params = new Map<string, JsonObject>();
  for (const list of [op.pathItem.parameters, op.operation.parameters]) {
    for (const p of Array.isArray(list) ? list : []) {
      const param = asRecord(p);
      const name = asString(param?.name);
      const location = asString(param?.in);
      if (!param || name === undefined || location === undefined) continue;
      params.set(`${location}\u0000${location === 'header' ? name.toLowerCase() : name}`, param);
    }
  }

  const groups = new Map<ParamLocation, { properties: JsonObject; required: string[] }>();
  for (const param of params.values()) {
    const location = param.in;
    const name = param.name as string;
    if (location !== 'path' && location !== 'query' && location !== 'header') continue; // cookie: not forwarded
    if (location === 'header' && IGNORED_HEADERS.has(name.toLowerCase())) continue;
    const group = groups.get(location) ?? { properties: {}, required: [] };
    groups.set(location, group);
    const schema = copier.copy(param.schema ?? pickMediaType(param.content, true)?.schema);
    const description = asString(param.description);
    if (description !== undefined && schema.description === undefined) schema.description = description;
    defineProperty(group.properties, name, schema);
    // Path parameters are always required (the spec mandates it even when a document forgets to say so).
    if (location === 'path' || param.required === true) group.required.push(name);
  }

  const properties: JsonObject = {};
  const required: string[] = [];
  for (const location of ['path', 'query', 'header'] as const) {
    const group = groups.get(location);
    if (!group) continue;
    properties[location] = objectSchema(group.properties, group.required);
    if (group.required.length > 0) required.push(location);
  }

  const requestBody = asRecord(op.operation.requestBody);
  if (requestBody) {
    properties.body = copier.copy(pickMediaType(requestBody.content, true)?.schema);
    if (requestBody.required === true) required.push('body');
  }

  return Object.keys(properties).length === 0 ? null : copier.finish(objectSchema(properties, required));
}

function outputSchema(operation: JsonObject, copier: SchemaCopier): JsonSchema | null {
  const responses = asRecord(operation.responses) ?? {};
  const successes = Object.keys(responses)
    .filter((code) => /^2(\d\d|XX)$/i.test(code))
    // Explicit codes ascending, then the 2XX range ('X' sorts after every digit).
    .sort((a, b) => compareStrings(a.toUpperCase(), b.toUpperCase()));
  for (const code of [...successes, 'default']) {
    const media = pickMediaType(asRecord(responses[code])?.content, false);
    if (media) return copier.finish(copier.copy(media.schema));
  }
  return null;
}

/** application/json first, then any other JSON type (…/json, …+json); for request bodies, then whatever comes first. */
function pickMediaType(content: unknown, anyAsLastResort: boolean): JsonObject | undefined {
  const entries = Object.entries(asRecord(content) ?? {}).flatMap(([type, media]) => {
    const record = asRecord(media);
    return record ? [{ type: type.split(';')[0]!.trim().toLowerCase(), media: record }] : [];
  });
  const found =
    entries.find((e) => e.type === 'application/json') ??
    entries.find((e) => e.type.endsWith('/json') || e.type.endsWith('+json')) ??
    (anyAsLastResort ? entries[0] : undefined);
  return found?.media;
}

function objectSchema(properties: JsonObject, required: string[]): JsonSchema {
  // `required: []` is invalid in draft-04 (the dialect of OpenAPI 3.0), so it is left out when empty.
  return required.length > 0 ? { type: 'object', properties, required } : { type: 'object', properties };
}

/**
 * Copies the parts of one endpoint schema out of the dereferenced document. A circular schema is a real object cycle
 * there; each object met again inside itself becomes {$ref: '#/$defs/<component name>'}, and `finish` puts those
 * definitions at the root, so every endpoint schema stands on its own (a '#/components/…' ref would mean nothing
 * outside the document).
 */
class SchemaCopier {
  private readonly defs = new Map<object, string>();
  private readonly pending: object[] = [];
  private materializing: object | undefined;

  constructor(
    private readonly componentNames: ReadonlyMap<object, string>,
    private readonly budget: Budget,
  ) {}

  /** A fresh, plain copy; 3.1 boolean schemas become their object equivalents. */
  copy(schema: unknown): JsonSchema {
    if (schema === true || schema === undefined) return {};
    if (schema === false) return { not: {} };
    const copy = cloneJson(schema, this.budget, (obj, inCycle) => this.refFor(obj, inCycle));
    return isRecord(copy) ? copy : {};
  }

  finish(root: JsonSchema): JsonSchema {
    const defs: JsonObject = {};
    for (let obj = this.pending.shift(); obj !== undefined; obj = this.pending.shift()) {
      this.materializing = obj;
      const def = this.copy(obj);
      defineProperty(defs, this.defs.get(obj)!, def);
    }
    this.materializing = undefined;
    if (Object.keys(defs).length === 0) return root;
    return { ...root, $defs: { ...asRecord(root.$defs), ...defs } };
  }

  private refFor(obj: object, inCycle: boolean): JsonObject | undefined {
    let name = this.defs.get(obj);
    if (obj === this.materializing && !inCycle) return undefined; // the definition's own body
    if (name === undefined) {
      if (!inCycle) return undefined;
      const base = this.componentNames.get(obj) ?? 'Schema';
      const taken = new Set(this.defs.values());
      name = base;
      for (let i = 2; taken.has(name); i++) name = `${base}${i}`;
      this.defs.set(obj, name);
      this.pending.push(obj);
    }
    return { $ref: `#/$defs/${escapePointer(name)}` };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Servers

function serverUrls(servers: unknown): string[] {
  if (!Array.isArray(servers)) return [];
  return servers.flatMap((s: unknown) => {
    const server = asRecord(s);
    const url = asString(server?.url);
    if (url === undefined) return [];
    const variables = asRecord(server?.variables) ?? {};
    return [
      url.replace(/\{([^{}]+)\}/g, (whole, name: string) => {
        const value = asRecord(variables[name])?.default;
        return typeof value === 'string' || typeof value === 'number' ? String(value) : whole;
      }),
    ];
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Bounded JSON copy

/** Approximate serialised bytes left; `exceeded` throws the error that fits the context. Spending also spends from
 *  the parent, so one endpoint's schema is limited on its own and all of them together. */
class Budget {
  constructor(
    private remaining: number,
    private readonly exceeded: () => never,
    private readonly parent?: Budget,
  ) {}

  spend(bytes: number): void {
    this.remaining -= bytes;
    if (this.remaining < 0) this.exceeded();
    this.parent?.spend(bytes);
  }
}

function documentTooLarge(): never {
  throw new OpenApiImportError(
    `The OpenAPI document is larger than ${MAX_DOCUMENT_BYTES} bytes (YAML aliases counted as expanded).`,
    { details: { limit_bytes: MAX_DOCUMENT_BYTES } },
  );
}

/**
 * Deep copy of JSON-compatible data, charged against `budget` as it goes (shared sub-objects are charged each time
 * they are reached: that is exactly the expansion JSON.stringify would perform). `substitute` may replace an object
 * (it is told whether the object is one of its own ancestors); without it, cycles are refused.
 */
function cloneJson(
  value: unknown,
  budget: Budget,
  substitute?: (obj: object, inCycle: boolean) => unknown,
  depth = 0,
  ancestors = new Set<object>(),
): unknown {
  if (value === null || typeof value === 'boolean') {
    budget.spend(5);
    return value;
  }
  if (typeof value === 'number') {
    budget.spend(24);
    return Number.isFinite(value) ? value : null;
  }
  if (typeof value === 'string') {
    budget.spend(value.length + 2);
    return value;
  }
  if (typeof value !== 'object') {
    throw new OpenApiImportError(`The OpenAPI document contains a value JSON cannot represent (${typeof value}).`);
  }
  const inCycle = ancestors.has(value);
  const replacement = substitute?.(value, inCycle);
  if (replacement !== undefined) return cloneJson(replacement, budget);
  if (inCycle) throw new OpenApiImportError('The OpenAPI document contains a circular object reference.');
  if (depth > MAX_DEPTH) throw new OpenApiImportError(`The OpenAPI document is nested more than ${MAX_DEPTH} levels.`);
  ancestors.add(value);
  budget.spend(2);
  let copy: unknown;
  if (Array.isArray(value)) {
    copy = (value as unknown[]).map((v) => {
      budget.spend(1);
      return cloneJson(v ?? null, budget, substitute, depth + 1, ancestors);
    });
  } else if (isRecord(value)) {
    const out: JsonObject = {};
    for (const [key, v] of Object.entries(value)) {
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue; // as JSON.stringify does
      budget.spend(key.length + 4);
      defineProperty(out, key, cloneJson(v, budget, substitute, depth + 1, ancestors));
    }
    copy = out;
  } else {
    throw new OpenApiImportError('The OpenAPI document must contain only plain JSON objects and arrays.');
  }
  ancestors.delete(value);
  return copy;
}

// ---------------------------------------------------------------------------------------------------------------
// Small helpers

function isRecord(value: unknown): value is JsonObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function asRecord(value: unknown): JsonObject | undefined {
  return isRecord(value) ? value : undefined;
}

function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Own data property even for '__proto__', which plain assignment would turn into a prototype change. */
function defineProperty(target: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function firstLine(text: string): string {
  return text.split('\n')[0]?.trim() ?? text;
}
