/**
 * Import a provider's API listing from an OpenAPI 3.0 / 3.1 document (JSON or YAML text, or a parsed object):
 * one marketplace endpoint per operation, with its input and output JSON schemas.
 * The document is untrusted: nothing here touches the file system or the network, and every step that could
 * expand the document (YAML aliases, $ref inlining) runs against a byte budget so a small input cannot blow up.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { JSON_SCHEMA, load as loadYaml } from 'js-yaml';
import { BAD_TEXT_MESSAGE, checkJson } from '../input.js';
import { ValidationError } from '../errors.js';
import {
  asRecord,
  asString,
  Budget,
  cloneJson,
  compareStrings,
  errorMessage,
  escapePointer,
  firstLine,
  isRecord,
  OpenApiImportError,
  type JsonObject,
} from './openapi-json.js';
import { HTTP_METHODS, listOperations, toEndpoint, type ImportedEndpoint } from './openapi-operations.js';

export { HTTP_METHODS, type HttpMethod, type ImportedEndpoint } from './openapi-operations.js';
export { OpenApiImportError, type JsonSchema } from './openapi-json.js';

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
/** Budget for all endpoint schemas together: a few shared schemas can legitimately fan out, but not without bound. */
export const MAX_EXPANDED_SCHEMA_BYTES = 16 * 1024 * 1024;

// The parser's own guard for its dereference crawl, so a pathological document fails instead of hanging.
const PARSER_TIMEOUT_MS = 5_000;

type ParserDocument = Awaited<ReturnType<typeof SwaggerParser.dereference>>;

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

function documentTooLarge(): never {
  throw new OpenApiImportError(
    `The OpenAPI document is larger than ${MAX_DOCUMENT_BYTES} bytes (YAML aliases counted as expanded).`,
    { details: { limit_bytes: MAX_DOCUMENT_BYTES } },
  );
}
