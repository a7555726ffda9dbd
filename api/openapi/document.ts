/**
 * Builds the OpenAPI 3.1.0 document of the control plane and the gateway from the operations the routes declare
 * (api/openapi/operations.ts gathers them). Every request and response schema is zod's JSON Schema output (`z.toJSONSchema`,
 * draft 2020-12): request schemas as parsed (`io: 'input'`), response schemas as written (`io: 'output'`). The
 * envelope, the error responses per status (with the codes of core/errors.ts) and the security schemes are
 * components. Nothing here is written by hand per route.
 */
import { z } from 'zod';
import { ERROR_KINDS } from '../../core/errors.js';
import { OAuthError } from '../../core/oauth/oauth.schemas.js';
import { isRawBody, type Operation, type SuccessBody, type Tag } from './operation.js';
import { allOperations } from './operations.js';

export const OPENAPI_VERSION = '3.1.0';
export const DOCUMENT_VERSION = '1.0.0';

type Json = Record<string, unknown>;

const TAGS: Record<Tag, string> = {
  Health: 'Status of the service and its components.',
  Accounts: 'Registration, signup, email verification, sign-in and the caller.',
  Keys: 'API keys of the caller’s org: caps, approvals, revocation.',
  Usage: 'Metered calls of the caller’s org.',
  Profile: 'The caller’s profile and avatars.',
  Billing: 'Credits, checkout, card setup, portal, auto-reload and the payment processor’s webhook.',
  Catalog: 'Search, listings and their sub-resources, providers, terms, document snapshots.',
  Market: 'Leaderboards, the market view and API requests.',
  Provider: 'A provider’s own APIs, documents, analytics and payouts onboarding.',
  Reference: 'This document and its browsable rendering.',
  Pages: 'Server-rendered HTML pages (forms post back with a CSRF token; the session is a cookie).',
  OAuth: 'The OAuth 2.1 authorization server of the agent-tool server (protocol shapes, not the envelope).',
  Gateway: 'The metered proxy to catalog APIs, served at the gateway’s address.',
};

/** zod → JSON Schema 2020-12 for embedding: no `$schema`, and no local `$defs` (they would not resolve here). */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
  delete out.$schema;
  if ('$defs' in out) throw new Error('A schema with $defs cannot be embedded: inline it or register a component.');
  return withoutSafeIntegerBounds(out) as Json;
}

/**
 * zod's `.int()` states the safe-integer range as bounds; they say nothing to a reader and made the reference's
 * generated examples show `-9007199254740991` for every integer without a bound of its own (issue 22).
 */
function withoutSafeIntegerBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutSafeIntegerBounds);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) continue;
    if (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) continue;
    out[key] = withoutSafeIntegerBounds(value);
  }
  return out;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Wire codes per HTTP status, from the one table of core/errors.ts. */
export function codesByStatus(): Map<number, string[]> {
  const byStatus = new Map<number, string[]>();
  for (const { status, code } of Object.values(ERROR_KINDS)) {
    const codes = byStatus.get(status) ?? [];
    if (!codes.includes(code)) codes.push(code);
    byStatus.set(status, codes);
  }
  return byStatus;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request: invalid path, query or body (`validation_failed`).',
  401: 'Missing, malformed or unknown bearer token.',
  402: 'Spend governance refused the call.',
  403: 'The credential may not do this (missing scope, a key where a person is needed, own API, suspended org).',
  404: 'No such resource.',
  405: 'Method not allowed on this path.',
  409: 'Conflicts with the current state.',
  410: 'Gone: an archived API (`api_archived`), a removed endpoint (`endpoint_removed`, with the date), or an expired link or code.',
  413: 'The request body is too large (`validation_failed`).',
  415: 'Unsupported request media type.',
  422: 'Well-formed but refused (verification failed, idempotency key reused).',
  428: 'Required provider terms are not accepted (details: `approval_url`, `snapshot_url`, `document_id`, `content_hash`).',
  429: 'Rate limited (`Retry-After` says when to retry).',
  500: 'Unexpected error (`internal_error`).',
  502: 'The upstream or the payment processor failed.',
  503: 'A component this request needs is unavailable (`internal_error`; retry shortly).',
};

function components(used: Set<number>): Json {
  return { securitySchemes: securitySchemes(), schemas: sharedSchemas(), responses: errorResponses(used) };
}

/** One reusable response per error status the document uses: the failure envelope with that status's codes. */
function errorResponses(used: Set<number>): Json {
  const responses: Json = {};
  for (const [status, codes] of codesByStatus()) {
    if (!used.has(status)) continue;
    responses[`Error${status}`] = {
      description: STATUS_TEXT[status] ?? `Error ${status}.`,
      content: {
        'application/json': {
          schema: {
            allOf: [ref('FailureEnvelope')],
            properties: {
              error: {
                properties: { code: { enum: codes }, message: { type: 'string' }, details: { type: 'object' } },
              },
            },
          },
          // The reference shows this, not one generated from the shared envelope (whose first code is a 400's).
          example: {
            ok: false,
            error: { code: codes[0], message: STATUS_TEXT[status] ?? `Error ${status}.` },
            meta: { request_id: 'req_01kb2x0ex4mp1e0000000000' },
          },
        },
      },
    };
  }
  return responses;
}

/** How a caller authenticates: an API key or OAuth token, a person's session token, or the pages' cookie. */
function securitySchemes(): Json {
  return {
    bearerKey: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'svc_live_… API key, or an OAuth access token',
      description: 'An API key (`svc_live_` plus 24 characters) or an OAuth access token. Scopes: see `x-scopes`.',
    },
    session: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'sess_… session token',
      description: 'A person’s session token (control plane only; it wins over a key). Full marketplace scopes.',
    },
    sessionCookie: {
      type: 'apiKey',
      in: 'cookie',
      name: 'svc_session',
      description: 'The pages’ session cookie, set by the sign-in pages.',
    },
  };
}

/** The envelope's shared parts: meta, the error object, the failure envelope. */
function sharedSchemas(): Json {
  return {
    Meta: {
      type: 'object',
      required: ['request_id'],
      properties: { request_id: { type: 'string', description: 'Equals the X-Request-Id response header.' } },
    },
    ErrorObject: {
      type: 'object',
      required: ['code', 'message'],
      additionalProperties: false,
      properties: {
        code: { type: 'string', enum: [...new Set(Object.values(ERROR_KINDS).map((k) => k.code))] },
        message: { type: 'string' },
        details: { type: 'object' },
      },
    },
    FailureEnvelope: {
      type: 'object',
      required: ['ok', 'error', 'meta'],
      additionalProperties: false,
      properties: {
        ok: { const: false },
        error: ref('ErrorObject'),
        meta: {
          type: 'object',
          required: ['request_id'],
          additionalProperties: false,
          properties: { request_id: { type: 'string' } },
        },
      },
    },
  };
}

function envelope(data: z.ZodType, meta?: z.ZodObject): Json {
  return {
    type: 'object',
    required: ['ok', 'data', 'meta'],
    additionalProperties: false,
    properties: {
      ok: { const: true },
      data: jsonSchema(data, 'output'),
      meta: meta ? jsonSchema(meta, 'output') : ref('Meta'),
    },
  };
}

function successResponse(body: SuccessBody): Json {
  switch (body.kind) {
    case 'envelope':
      return {
        description: body.description,
        content: { 'application/json': { schema: envelope(body.data, body.meta) } },
      };
    case 'json':
      return {
        description: body.description,
        content: { [body.type ?? 'application/json']: { schema: jsonSchema(body.schema, 'output') } },
      };
    case 'media':
      return { description: body.description, content: { [body.type]: {} } };
    case 'redirect':
      return { description: body.description, headers: { Location: { schema: { type: 'string' } } } };
    case 'empty':
      return { description: body.description };
  }
}

const PAGE_ERRORS = [400, 401, 403, 404, 409, 410, 413, 415, 422, 429, 500, 503];

/** The error statuses an operation can answer: its own, plus what every operation of its kind can. */
export function errorStatuses(op: Operation): number[] {
  if (op.html) return PAGE_ERRORS;
  const s = new Set<number>([400, 500, 503, ...(op.errors ?? [])]);
  if (op.auth !== 'none') s.add(401);
  if (op.auth === 'bearer' || op.auth === 'session' || op.auth === 'key') s.add(403);
  if (op.path.includes('{')) s.add(404);
  if (op.body) {
    s.add(413);
    s.add(415);
  }
  if (op.tag === 'OAuth') [401, 403, 404, 429].forEach((x) => s.add(x));
  return [...s].sort((a, b) => a - b);
}

function errorResponse(op: Operation, status: number): Json {
  if (op.html) {
    return {
      description: STATUS_TEXT[status] ?? `Error ${status}.`,
      content: { 'text/html': {}, 'application/json': { schema: ref('FailureEnvelope') } },
    };
  }
  if (op.tag === 'OAuth') {
    return {
      description: `${STATUS_TEXT[status] ?? `Error ${status}.`} OAuth protocol error (\`error\`, \`error_description\`), or the failure envelope from the input checks.`,
      // The RFC error from the protocol endpoint, or the envelope when our own input checks refuse first.
      content: {
        'application/json': { schema: { anyOf: [jsonSchema(OAuthError, 'output'), ref('FailureEnvelope')] } },
      },
    };
  }
  return { $ref: `#/components/responses/Error${status}` };
}

function security(op: Operation): Json[] | undefined {
  const scopes = op.scope ? [op.scope] : [];
  switch (op.auth) {
    case 'none':
      return op.html && (op.path.startsWith('/console') || op.method === 'post') ? [{}, { sessionCookie: [] }] : [];
    case 'optional':
      return [{}, { bearerKey: [] }, { session: [] }];
    case 'bearer':
      return [{ bearerKey: scopes }, { session: scopes }];
    case 'session':
      return [{ session: scopes }];
    case 'key':
      return [{ bearerKey: scopes }];
  }
}

function parameters(op: Operation): Json[] {
  const params: Json[] = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
    ...(m[1] === 'path' ? { description: 'The rest of the upstream path; may contain `/`.' } : {}),
  }));
  if (op.query) {
    const schema = jsonSchema(op.query, 'input');
    const required = new Set((schema.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
      const { description, ...rest } = prop;
      params.push({
        name,
        in: 'query',
        required: required.has(name),
        schema: rest,
        ...(description ? { description } : {}),
      });
    }
  }
  return params;
}

function requestBody(op: Operation): Json | undefined {
  if (!op.body) return undefined;
  if (isRawBody(op.body)) {
    const raw = op.body;
    return {
      description: raw.description,
      required: true,
      content: Object.fromEntries(raw.raw.map((t) => [t, {}])),
    };
  }
  const schema = jsonSchema(op.body, 'input');
  return {
    description: 'JSON. An empty body counts as `{}`; unknown fields are refused where the schema says so.',
    required: ((schema.required as string[] | undefined) ?? []).length > 0,
    content: { 'application/json': { schema } },
  };
}

function operation(op: Operation): Json {
  const responses: Json = {};
  for (const [status, body] of Object.entries(op.success)) responses[status] = successResponse(body);
  for (const status of errorStatuses(op)) responses[String(status)] = errorResponse(op, status);
  const scopeLine = op.scope ? `Scope: \`${op.scope}\`.` : undefined;
  const authLine = {
    none: 'Public.',
    optional: 'Public; a bearer token refines the answer.',
    bearer: 'Needs a bearer token: an API key, an OAuth access token or a session.',
    session: 'Needs a person’s session token (an API key gets 403).',
    key: 'Needs an API key (a session token gets 401).',
  }[op.auth];
  const body = requestBody(op);
  const params = parameters(op);
  return {
    operationId: op.operationId,
    summary: op.summary,
    description: [op.description, authLine, scopeLine].filter(Boolean).join(' '),
    tags: [op.tag],
    security: security(op),
    'x-scopes': op.scope ? [op.scope] : [],
    ...(params.length ? { parameters: params } : {}),
    ...(body ? { requestBody: body } : {}),
    responses,
  };
}

/** Where "Try it out" sends requests: this deployment's own addresses (PUBLIC_BASE_URL, GATEWAY_URL). */
export interface DocumentServers {
  baseUrl: string;
  gatewayUrl: string;
}

const LOCAL_SERVERS: DocumentServers = { baseUrl: 'http://localhost:3000', gatewayUrl: 'http://localhost:3001' };

export function buildOpenApiDocument(servers: DocumentServers = LOCAL_SERVERS): Json {
  const baseServerVars = { variables: { base_url: { default: servers.baseUrl } } };
  const gatewayServerVars = { variables: { gateway_url: { default: servers.gatewayUrl } } };
  const paths: Record<string, Json> = {};
  for (const op of allOperations()) {
    const item = (paths[op.path] ??= {});
    if (op.method in item) throw new Error(`Duplicate operation ${op.method.toUpperCase()} ${op.path}.`);
    item[op.method] = operation(op);
    if (op.surface === 'gateway') item.servers = [{ url: '{gateway_url}', ...gatewayServerVars }];
  }
  paths['/health']!.servers = [
    { url: '{base_url}', description: 'Control plane', ...baseServerVars },
    { url: '{gateway_url}', description: 'Gateway', ...gatewayServerVars },
  ];
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'svc marketplace: control plane and gateway',
      version: DOCUMENT_VERSION,
      description:
        'Every response uses the envelope `{ ok, data, meta }` / `{ ok: false, error, meta }`, except the raw ' +
        'documents (`/v1/apis/{slug}/openapi`, `/v1/openapi.json`), the pages and the OAuth protocol endpoints. ' +
        'Generated from the zod schemas the routes validate with.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '{base_url}', description: 'Control plane', ...baseServerVars }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: components(new Set(allOperations().flatMap(errorStatuses))),
  };
}

const cached = new Map<string, { json: Json; text: string }>();

/** The document for these servers, built once per process (and its serialised form, for the route). */
export function openApiDocument(servers: DocumentServers = LOCAL_SERVERS): { json: Json; text: string } {
  const key = `${servers.baseUrl} ${servers.gatewayUrl}`;
  let doc = cached.get(key);
  if (!doc) {
    const json = buildOpenApiDocument(servers);
    doc = { json, text: JSON.stringify(json) };
    cached.set(key, doc);
  }
  return doc;
}
