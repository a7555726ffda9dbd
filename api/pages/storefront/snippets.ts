/**
 * A listing page's copy-paste snippets (issue 31): `curl`, TypeScript `fetch`, `svc call` and the MCP `add_api_tools`
 * call, each working verbatim once `SVC_API_KEY` holds a key (the CLI reads that variable too), against this
 * deployment's configured gateway and agent-tool URLs. Path parameters get example values and a body a sample built
 * from the endpoint's input schema (its `example`, `default`, first `enum` value, else a value of its type).
 *
 * The stored input schema is read as the import writes it (`properties` among `path`, `query`, `header`, `body`:
 * core/providers/openapi-operations.ts); any other schema a provider wrote is the body, or the query for GET and
 * HEAD, as the installed agent tools read it (core/agent-tools/tool-shape.ts).
 */

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);
const GROUPS = ['path', 'query', 'header', 'body'];
const QUERY_METHODS = new Set(['GET', 'HEAD']);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

export interface SnippetEndpoint {
  method: string;
  /** The path template, `{name}` for a parameter. */
  path: string;
  input_schema: Json | null;
}

export interface SnippetTarget {
  slug: string;
  /** `{gateway}/v1/proxy/{slug}`. */
  gatewayBase: string;
  gateway: string;
  mcp: string;
}

export interface Snippets {
  curl: string;
  fetch: string;
  svc: string;
  mcp: string;
  /** The concrete path called (examples filled in) and its query string. */
  path: string;
}

/** A single-quoted shell word (a `'` inside closes, escapes and reopens). */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** A value for a schema: its example, default, const or first enum value, else one of its type. */
export function sampleValue(schema: unknown, depth = 0): unknown {
  if (!isRecord(schema)) return 'example';
  for (const k of ['example', 'default', 'const'] as const) if (schema[k] !== undefined) return schema[k];
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  for (const k of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(schema[k]) && schema[k].length) return sampleValue(schema[k][0], depth);
  }
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((s) => sampleValue(s, depth)).filter(isRecord);
    if (parts.length) return Object.assign({}, ...parts) as Json;
  }
  const type = Array.isArray(schema.type) ? (schema.type.find((t) => t !== 'null') as unknown) : schema.type;
  if (type === 'object' || (type === undefined && isRecord(schema.properties))) return sampleObject(schema, depth);
  if (type === 'array') return depth > 3 ? [] : [sampleValue(schema.items, depth + 1)];
  if (type === 'integer' || type === 'number') return typeof schema.minimum === 'number' ? schema.minimum : 1;
  if (type === 'boolean') return true;
  if (type === 'null') return null;
  return sampleString(schema);
}

function sampleString(schema: Json): string {
  switch (schema.format) {
    case 'date-time':
      return '2026-01-01T00:00:00Z';
    case 'date':
      return '2026-01-01';
    case 'email':
      return 'person@example.com';
    case 'uri':
    case 'url':
      return 'https://example.com';
    case 'uuid':
      return '00000000-0000-4000-8000-000000000000';
    default:
      return 'example';
  }
}

function sampleObject(schema: Json, depth: number): Json {
  const out: Json = {};
  if (depth > 3 || !isRecord(schema.properties)) return out;
  for (const [name, prop] of Object.entries(schema.properties).slice(0, 20)) out[name] = sampleValue(prop, depth + 1);
  return out;
}

/** The schema's groups (path, query, body) as the import writes them, or the provider's schema read by the method. */
function groupsOf(e: SnippetEndpoint): { path?: Json; query?: Json; body?: unknown } {
  const s = e.input_schema;
  if (!isRecord(s)) return {};
  const props = isRecord(s.properties) ? s.properties : undefined;
  if (props && Object.keys(props).length && Object.keys(props).every((k) => GROUPS.includes(k))) {
    return {
      path: isRecord(props.path) ? props.path : undefined,
      query: isRecord(props.query) ? props.query : undefined,
      body: props.body,
    };
  }
  return QUERY_METHODS.has(e.method) ? { query: s } : { body: s };
}

/** Example values of the query: the required parameters and those the provider gave an example. */
function sampleQuery(group: Json | undefined): [string, string][] {
  if (!group || !isRecord(group.properties)) return [];
  const required = new Set(Array.isArray(group.required) ? (group.required as string[]) : []);
  const out: [string, string][] = [];
  for (const [name, prop] of Object.entries(group.properties)) {
    const exampled = isRecord(prop) && (prop.example !== undefined || prop.default !== undefined);
    if (!required.has(name) && !exampled) continue;
    const v = sampleValue(prop);
    out.push([name, typeof v === 'string' ? v : JSON.stringify(v)]);
  }
  return out;
}

/** The path with each `{name}` replaced by an example value, percent-encoded. */
export function examplePath(e: SnippetEndpoint): string {
  const described = groupsOf(e).path;
  const props = isRecord(described?.properties) ? described.properties : {};
  return e.path.replace(/\{([^}/]+)\}/g, (_m, name: string) => {
    const v = sampleValue(props[name] ?? { type: 'string' });
    return encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v));
  });
}

function sampleBody(e: SnippetEndpoint): unknown {
  if (!BODY_METHODS.has(e.method)) return undefined;
  const { body } = groupsOf(e);
  return body === undefined ? {} : sampleValue(body);
}

export function snippetsFor(target: SnippetTarget, e: SnippetEndpoint): Snippets {
  const path = examplePath(e);
  const query = sampleQuery(groupsOf(e).query);
  const qs = query.length ? `?${new URLSearchParams(query).toString()}` : '';
  const url = `${target.gatewayBase}${path}${qs}`;
  const body = sampleBody(e);
  const json = body === undefined ? undefined : JSON.stringify(body);
  const curl = [
    `curl -sS${e.method === 'GET' ? '' : e.method === 'HEAD' ? ' --head' : ` -X ${e.method}`} ${shellQuote(url)}`,
    `  -H "Authorization: Bearer $SVC_API_KEY"`,
    ...(json !== undefined ? [`  -H 'Content-Type: application/json'`, `  -d ${shellQuote(json)}`] : []),
  ].join(' \\\n');
  const fetchLines = [
    `const res = await fetch(${JSON.stringify(url)}, {`,
    `  method: '${e.method}',`,
    `  headers: {`,
    '    Authorization: `Bearer ${process.env.SVC_API_KEY}`,',
    ...(json !== undefined ? [`    'Content-Type': 'application/json',`] : []),
    `  },`,
    ...(json !== undefined ? [`  body: JSON.stringify(${JSON.stringify(body, null, 2).replace(/\n/g, '\n  ')}),`] : []),
    `});`,
    `const answer = await res.json(); // { ok, data, meta: { cost_cents, … } } or { ok: false, error }`,
    `console.log(answer);`,
  ];
  const svc = [
    `npx svc --gateway-url ${shellQuote(target.gateway)} call ${target.slug} ${e.method} ${shellQuote(path)}`,
    ...query.map(([k, v]) => `  -q ${shellQuote(`${k}=${v}`)}`),
    ...(json !== undefined ? [`  -d ${shellQuote(json)}`] : []),
  ].join(' \\\n');
  const mcp = `# 1. Connect your MCP client to ${target.mcp}/mcp with the header "Authorization: Bearer $SVC_API_KEY",
#    for example Claude Code:
claude mcp add --transport http marketplace ${shellQuote(`${target.mcp}/mcp`)} --header "Authorization: Bearer $SVC_API_KEY"
# 2. Call the add_api_tools tool: this API's endpoints become tools of your own, metered and capped like call_api.
{"name": "add_api_tools", "arguments": {"slug": ${JSON.stringify(target.slug)}}}`;
  return { curl, fetch: fetchLines.join('\n'), svc, mcp, path: `${path}${qs}` };
}
