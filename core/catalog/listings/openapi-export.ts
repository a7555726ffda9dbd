/**
 * GET /v1/apis/{slug}/openapi: an OpenAPI 3.0.3 document for calling a listing through the gateway, regenerated from
 * its endpoints (an imported 3.1 document is never served as is: its schemas are converted down here). Servers are
 * the gateway's `/v1/proxy/{slug}`, the security scheme is the bearer API key, and each operation answers the
 * gateway's envelope with the endpoint's output schema as `data`.
 *
 * Stored schemas are untrusted JSON (a provider's inline schemas, or JSON Schema 2020-12 from a 3.1 import), so
 * every schema goes through SchemaConverter, which keeps only OpenAPI 3.0 Schema Object keywords with values of the
 * right type, converts 2020-12 forms (type arrays with null, const, examples, numeric exclusive bounds, boolean
 * schemas) and rewrites the importer's `#/$defs/<name>` references to `#/components/schemas/…` (dropping any other
 * reference, which could not resolve). The result always validates as OpenAPI 3.0 (tested with swagger-parser).
 */
import type { IApi, IEndpoint } from '../../../db/entities/index.js';
import type { ListingOpenApiDocument } from './listings.schemas.js';

type Json = Record<string, unknown>;

const TYPES = new Set(['integer', 'number', 'string', 'boolean', 'array', 'object']);
const NON_NEGATIVE_INT = ['maxLength', 'minLength', 'maxItems', 'minItems', 'maxProperties', 'minProperties'];
const NUMBERS = ['maximum', 'minimum'];
const STRINGS = ['title', 'description', 'format'];
const BOOLEANS = ['uniqueItems', 'nullable', 'readOnly', 'writeOnly', 'deprecated'];
const SCHEMA_LISTS = ['allOf', 'oneOf', 'anyOf'];
/** Deeper than any sane schema; past it the rest is replaced by `{}` (any value). */
const MAX_DEPTH = 64;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function set(target: Json, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Names in components.schemas must match ^[A-Za-z0-9._-]+$. */
function componentName(raw: string): string {
  const cleaned = raw.replace(/[^A-Za-z0-9._-]/g, '_');
  return cleaned === '' ? 'Schema' : cleaned;
}

function unescapePointer(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** Converts one endpoint schema (with its own root `$defs`) into 3.0 Schema Objects. */
class SchemaConverter {
  /** `$defs` name of this schema → component name. */
  private readonly refs = new Map<string, string>();

  constructor(
    defs: Json,
    prefix: string,
    private readonly components: Json,
    taken: Set<string>,
  ) {
    for (const name of Object.keys(defs)) {
      let candidate = componentName(`${prefix}_${name}`);
      for (let i = 2; taken.has(candidate); i++) candidate = componentName(`${prefix}_${name}_${i}`);
      taken.add(candidate);
      this.refs.set(name, candidate);
    }
    for (const [name, def] of Object.entries(defs)) set(this.components, this.refs.get(name)!, this.convert(def, 0));
  }

  convert(input: unknown, depth: number): Json {
    if (input === true || input === undefined) return {};
    if (input === false) return { not: {} };
    if (!isRecord(input) || depth > MAX_DEPTH) return {};
    const s = input;
    if (typeof s.$ref === 'string') return this.convertRef(s, s.$ref, depth);
    const out: Json = {};

    // type: a string, or (2020-12) an array that may hold 'null'
    const types = (Array.isArray(s.type) ? s.type : [s.type]).filter((t): t is string => typeof t === 'string');
    let nullable = s.nullable === true || types.includes('null');
    const real = [...new Set(types.filter((t) => TYPES.has(t)))];
    if (real.length === 1) out.type = real[0];

    copyValueKeywords(s, out);
    if (Array.isArray(s.enum) && s.enum.length > 0) {
      out.enum = uniqueValues(s.enum);
      if (s.enum.includes(null)) nullable = true;
    } else if (s.const !== undefined) {
      out.enum = [s.const];
      if (s.const === null) nullable = true;
    }
    if ('default' in s) out.default = s.default;
    if ('example' in s) out.example = s.example;
    else if (Array.isArray(s.examples) && s.examples.length > 0) out.example = s.examples[0];

    if (Array.isArray(s.required)) {
      const required = [...new Set(s.required.filter((r): r is string => typeof r === 'string'))];
      if (required.length > 0) out.required = required;
    }
    this.convertSubschemas(s, out, depth);
    // Several real types: one of them each (3.0 has a single `type`).
    if (real.length > 1) {
      const alternatives = real.map((t) => (t === 'array' ? { type: t, items: out.items ?? {} } : { type: t }));
      out.anyOf = out.anyOf ? [...(out.anyOf as Json[]), ...alternatives] : alternatives;
      delete out.items;
    }
    if (nullable) out.nullable = true;
    if (out.nullable === true && out.type === undefined && real.length === 0 && types.includes('null')) {
      // A null-only schema: 3.0 needs a type beside `nullable`; an enum of null says the rest.
      out.type = 'string';
      out.enum = [null];
    }
    for (const [k, v] of Object.entries(s)) if (k.startsWith('x-')) set(out, k, v);
    return out;
  }

  /** A `$ref`: to its component when it names one of this schema's `$defs`, else dropped; siblings kept. */
  private convertRef(s: Json, $ref: string, depth: number): Json {
    const m = /^#\/\$defs\/([^/]+)$/.exec($ref);
    const target = m ? this.refs.get(unescapePointer(m[1]!)) : undefined;
    const ref = target === undefined ? null : { $ref: `#/components/schemas/${target}` };
    const { $ref: _ref, ...rest } = s;
    const siblings = Object.keys(rest).length > 0 ? this.convert(rest, depth + 1) : {};
    if (ref === null) return siblings;
    // 3.0 ignores a $ref's siblings: keep them by wrapping the reference.
    return Object.keys(siblings).length === 0 ? ref : { allOf: [ref], ...siblings };
  }

  /** The keywords holding schemas: properties, additionalProperties, items (tuples too), not, allOf/oneOf/anyOf. */
  private convertSubschemas(s: Json, out: Json, depth: number): void {
    if (isRecord(s.properties)) {
      const props: Json = {};
      for (const [name, sub] of Object.entries(s.properties)) set(props, name, this.convert(sub, depth + 1));
      out.properties = props;
    }
    if (typeof s.additionalProperties === 'boolean') out.additionalProperties = s.additionalProperties;
    else if (isRecord(s.additionalProperties)) {
      out.additionalProperties = this.convert(s.additionalProperties, depth + 1);
    }
    if (Array.isArray(s.prefixItems) || Array.isArray(s.items)) {
      // A tuple (2020-12 prefixItems, draft-4 items array): 3.0 has no tuples; any of the member schemas.
      const members = (Array.isArray(s.prefixItems) ? s.prefixItems : (s.items as unknown[])).map((m) =>
        this.convert(m, depth + 1),
      );
      out.items = members.length === 0 ? {} : members.length === 1 ? members[0] : { anyOf: members };
    } else if (s.items !== undefined) {
      out.items = this.convert(s.items, depth + 1);
    }
    if (out.type === 'array' && out.items === undefined) out.items = {};
    if (s.not !== undefined && (isRecord(s.not) || typeof s.not === 'boolean'))
      out.not = this.convert(s.not, depth + 1);
    for (const k of SCHEMA_LISTS) {
      const list = s[k];
      if (Array.isArray(list) && list.length > 0) out[k] = list.map((m) => this.convert(m, depth + 1));
    }
  }
}

/** The keywords with plain values of the right type: annotations, flags, bounds (exclusive ones converted), pattern. */
function copyValueKeywords(s: Json, out: Json): void {
  for (const k of STRINGS) if (typeof s[k] === 'string') out[k] = s[k];
  for (const k of BOOLEANS) if (typeof s[k] === 'boolean') out[k] = s[k];
  for (const k of NUMBERS) if (typeof s[k] === 'number' && Number.isFinite(s[k])) out[k] = s[k];
  for (const k of NON_NEGATIVE_INT) {
    const v = s[k];
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0) out[k] = v;
  }
  if (typeof s.multipleOf === 'number' && s.multipleOf > 0 && Number.isFinite(s.multipleOf)) {
    out.multipleOf = s.multipleOf;
  }
  // Exclusive bounds: a boolean in 3.0 (draft 4), a number in 2020-12.
  for (const [ex, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    const v = s[ex];
    if (typeof v === 'boolean' && out[bound] !== undefined) out[ex] = v;
    else if (typeof v === 'number' && Number.isFinite(v)) {
      out[bound] = v;
      out[ex] = true;
    }
  }
  if (typeof s.pattern === 'string' && validPattern(s.pattern)) out.pattern = s.pattern;
}

function validPattern(pattern: string): boolean {
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

function uniqueValues(values: unknown[]): unknown[] {
  const seen = new Set<string>();
  return values.filter((v) => {
    const key = JSON.stringify(v) ?? 'undefined';
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function converterFor(schema: Json | null, prefix: string, components: Json, taken: Set<string>): SchemaConverter {
  const defs = schema && isRecord(schema.$defs) ? schema.$defs : {};
  return new SchemaConverter(defs, prefix, components, taken);
}

const PARAM_NAME_IN_PATH = /\{([^{}]+)\}/g;
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);
const OPERATION_ID = /^[A-Za-z0-9_.-]{1,200}$/;

function operationId(e: IEndpoint, used: Set<string>): string {
  let id =
    e.operationId && OPERATION_ID.test(e.operationId)
      ? e.operationId
      : `${e.method.toLowerCase()}${e.path.replace(/[^A-Za-z0-9]+/g, '_').replace(/_+$/, '')}`;
  for (let i = 2; used.has(id); i++) id = `${id}_${i}`;
  used.add(id);
  return id;
}

export interface OpenApiInput {
  api: Pick<IApi, 'slug' | 'name' | 'summary' | 'description' | 'docsUrl' | 'source' | 'updatedAt'>;
  endpoints: IEndpoint[];
  gatewayUrl: string;
  /** Price in cents per endpoint id (shown as `x-price-cents` on each operation). */
  prices: Map<string, number>;
}

export function exportOpenApi({ api, endpoints, gatewayUrl, prices }: OpenApiInput): ListingOpenApiDocument {
  const components: Json = {};
  const taken = new Set(['Meta', 'ErrorEnvelope']);
  const paths: Record<string, Json> = {};
  const usedIds = new Set<string>();

  endpoints.forEach((e, index) => {
    const operation = endpointOperation(e, index, { components, taken, usedIds, prices });
    const item = isRecord(paths[e.path]) ? paths[e.path] : {};
    set(item as Json, e.method.toLowerCase(), operation);
    set(paths, e.path, item);
  });

  const description = [api.summary, api.description ?? ''].filter((t) => t.trim() !== '').join('\n\n');
  const doc: ListingOpenApiDocument = {
    openapi: '3.0.3',
    info: {
      title: api.name,
      version: api.updatedAt.toISOString().slice(0, 10),
      description,
    },
    servers: [{ url: `${gatewayUrl}/v1/proxy/${api.slug}`, description: 'The marketplace gateway (metered).' }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'svc_live_<24 characters> (an API key with proxy:call)',
        },
      },
      schemas: { ...envelopeSchemas(), ...components },
    },
  };
  if (api.docsUrl) doc.externalDocs = { url: api.docsUrl, description: "The provider's documentation." };
  if (api.source === 'directory') {
    doc.info['x-not-callable'] = 'A directory listing: not callable through the gateway until claimed.';
  }
  return doc;
}

/** What the operations of one document share: its components (and their names) and its operation ids. */
interface ExportState {
  components: Json;
  taken: Set<string>;
  usedIds: Set<string>;
  prices: Map<string, number>;
}

/** One endpoint's Operation Object: its parameters and body from the input schema, its answer from the output schema. */
function endpointOperation(e: IEndpoint, index: number, state: ExportState): Json {
  const input = isRecord(e.inputSchema) ? e.inputSchema : null;
  const output = isRecord(e.outputSchema) ? e.outputSchema : null;
  const inConv = converterFor(input, `e${index}_in`, state.components, state.taken);
  const outConv = converterFor(output, `e${index}_out`, state.components, state.taken);
  const groups = isRecord(input?.properties) ? input.properties : {};
  const parameters = operationParameters(e, groups, inConv);

  const operation: Json = {
    operationId: operationId(e, state.usedIds),
    summary: e.summary ?? `${e.method} ${e.path}`,
    'x-endpoint-id': e.id,
    'x-price-cents': state.prices.get(e.id) ?? e.priceCents,
  };
  if (parameters.length > 0) operation.parameters = parameters;
  if ('body' in groups) {
    const inputRequired = Array.isArray(input?.required) ? input.required : [];
    operation.requestBody = {
      required: inputRequired.includes('body'),
      content: { 'application/json': { schema: inConv.convert(groups.body, 1) } },
    };
  }
  operation.responses = {
    '200': {
      description: 'The upstream answer in the gateway envelope (billing fields in meta).',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['ok', 'data', 'meta'],
            properties: {
              ok: { type: 'boolean', enum: [true] },
              data: output ? outConv.convert(output, 0) : {},
              meta: { $ref: '#/components/schemas/Meta' },
            },
          },
        },
      },
    },
    default: {
      description: 'A refusal or failure (401, 402, 403, 404, 428, 429, 502, 503) in the error envelope.',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    },
  };
  return operation;
}

/** Path parameters (every `{name}` of the path), then the query and header groups of the input schema. */
function operationParameters(e: IEndpoint, groups: Json, inConv: SchemaConverter): Json[] {
  const group = (name: string) => {
    const g = groups[name];
    return isRecord(g) ? g : {};
  };
  const groupProps = (name: string) => {
    const props = group(name).properties;
    return isRecord(props) ? props : {};
  };
  const groupRequired = (name: string) => {
    const req = group(name).required;
    return new Set(Array.isArray(req) ? req.filter((r): r is string => typeof r === 'string') : []);
  };

  const parameters: Json[] = [];
  const pathProps = groupProps('path');
  for (const name of new Set([...e.path.matchAll(PARAM_NAME_IN_PATH)].map((m) => m[1]!))) {
    const schema = name in pathProps ? inConv.convert(pathProps[name], 1) : { type: 'string' };
    parameters.push({ name, in: 'path', required: true, schema });
  }
  for (const location of ['query', 'header'] as const) {
    const required = groupRequired(location);
    for (const [name, sub] of Object.entries(groupProps(location))) {
      if (name === '' || (location === 'header' && IGNORED_HEADERS.has(name.toLowerCase()))) continue;
      const param: Json = { name, in: location, schema: inConv.convert(sub, 1) };
      if (required.has(name)) param.required = true;
      parameters.push(param);
    }
  }
  return parameters;
}

/** The gateway's envelope schemas every document carries: Meta (the success envelope's) and ErrorEnvelope. */
function envelopeSchemas(): Json {
  return {
    Meta: {
      type: 'object',
      required: ['request_id'],
      properties: {
        request_id: { type: 'string' },
        cost_cents: { type: 'integer' },
        price_cents_effective: { type: 'integer' },
        credit_applied_cents: { type: 'integer' },
        billable_cents: { type: 'integer' },
        price_increase: {
          type: 'object',
          properties: { price_cents: { type: 'integer' }, effective_at: { type: 'string', format: 'date-time' } },
        },
        discount: { type: 'object', additionalProperties: true },
        replayed: { type: 'boolean' },
        original_request_id: { type: 'string' },
      },
    },
    ErrorEnvelope: {
      type: 'object',
      required: ['ok', 'error', 'meta'],
      properties: {
        ok: { type: 'boolean', enum: [false] },
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'string' },
            message: { type: 'string' },
            details: { type: 'object', additionalProperties: true },
          },
        },
        meta: { type: 'object', properties: { request_id: { type: 'string' } } },
      },
    },
  };
}
