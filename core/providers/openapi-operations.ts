/**
 * The OpenAPI import, operations to endpoints: one marketplace endpoint per operation of the dereferenced document,
 * with its input schema (path, query, header parameters and the JSON body) and output schema (the first 2xx JSON
 * response), each copied out on its own byte budget; circular schemas become `$defs`.
 */
import {
  asRecord,
  asString,
  Budget,
  cloneJson,
  compareStrings,
  defineProperty,
  escapePointer,
  isRecord,
  OpenApiImportError,
  type JsonObject,
  type JsonSchema,
} from './openapi-json.js';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

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

/** Largest single input or output schema once $refs are inlined (a "$ref bomb" stops here, early). */
export const MAX_ENDPOINT_SCHEMA_BYTES = 1024 * 1024;

const MAX_SUMMARY_CHARS = 200;
// The OpenAPI spec says these header parameters are ignored (they come from content negotiation and security).
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

interface Operation {
  method: HttpMethod;
  path: string;
  pathItem: JsonObject;
  operation: JsonObject;
}

export function listOperations(api: JsonObject): Operation[] {
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

export function toEndpoint(
  op: Operation,
  componentNames: ReadonlyMap<object, string>,
  total: Budget,
): ImportedEndpoint {
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
