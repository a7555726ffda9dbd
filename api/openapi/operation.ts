/**
 * What one documented operation says (method, path, auth, scope, query, body, success and error responses), and the
 * small builders the declarations use. A control-plane route declares itself with `route()` (api/openapi/route.ts),
 * which registers the handler from the same declaration; pages, OAuth and the gateway declare theirs with
 * `documented()`. api/openapi/operations.ts gathers them all; api/openapi/document.ts turns them into OpenAPI 3.1.
 */
import { type z } from 'zod';
import type { Scope } from '../../core/auth/scopes.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head' | 'options';

/**
 * Who may call: `none` (public), `optional` (public; a bearer changes the answer), `bearer` (an API key, an OAuth
 * access token or a session), `session` (a person's session token only), `key` (an API key only: the gateway).
 */
export type AuthNeed = 'none' | 'optional' | 'bearer' | 'session' | 'key';

/** A success response: the envelope around `data` (with extra `meta`), raw JSON, or another media type. */
export type SuccessBody =
  | { kind: 'envelope'; data: z.ZodType; meta?: z.ZodObject; description: string }
  | { kind: 'json'; schema: z.ZodType; description: string; type?: string }
  | { kind: 'media'; type: string; description: string }
  | { kind: 'redirect'; description: string }
  | { kind: 'empty'; description: string };

export type Tag =
  | 'Health'
  | 'Accounts'
  | 'Keys'
  | 'Usage'
  | 'Profile'
  | 'Billing'
  | 'Catalog'
  | 'Market'
  | 'Provider'
  | 'Reference'
  | 'Pages'
  | 'OAuth'
  | 'Gateway';

/** A body that is not JSON: the handler reads it (raw bytes, a form); the document names its media types. */
export interface RawBody {
  raw: string[];
  description: string;
}

export interface Operation {
  method: HttpMethod;
  /** OpenAPI form: `{param}` (a route's Koa path is derived from it). */
  path: string;
  operationId: string;
  summary: string;
  tag: Tag;
  auth: AuthNeed;
  scope?: Scope;
  surface: 'control-plane' | 'gateway';
  query?: z.ZodObject;
  /** A JSON body (zod), or a raw body of the named media types. */
  body?: z.ZodType | RawBody;
  success: Record<number, SuccessBody>;
  /** Error statuses beyond the ones every operation of its kind can return (see document.ts `errorStatuses`). */
  errors?: readonly number[];
  /** Error responses are HTML pages (with the JSON envelope for the shared middleware's refusals). */
  html?: boolean;
  description?: string;
}

/** A declaration: an operation of the control plane unless it says `surface: 'gateway'`. */
export type OperationDecl = Omit<Operation, 'surface'> & { surface?: Operation['surface'] };

/** An operation served by a handler that is not a `route()` (pages, OAuth, the gateway). */
export const documented = (decl: OperationDecl): Operation => ({ surface: 'control-plane', ...decl });

export const isRawBody = (body: Operation['body']): body is RawBody => body !== undefined && 'raw' in body;

/** OpenAPI's `{param}` to koa-router's `:param`. */
export const koaPath = (path: string): string => path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');

export const env = (data: z.ZodType, description: string, meta?: z.ZodObject): SuccessBody => ({
  kind: 'envelope',
  data,
  description,
  ...(meta ? { meta } : {}),
});
export const html = (description: string): SuccessBody => ({ kind: 'media', type: 'text/html', description });
export const media = (type: string, description: string): SuccessBody => ({ kind: 'media', type, description });
/** JSON that is not the envelope; `type` when its media type is a JSON one other than application/json. */
export const rawJson = (schema: z.ZodType, description: string, type?: string): SuccessBody => ({
  kind: 'json',
  schema,
  description,
  ...(type ? { type } : {}),
});
export const empty = (description: string): SuccessBody => ({ kind: 'empty', description });
export const redirect = (description = 'Redirect (the Location header says where).'): SuccessBody => ({
  kind: 'redirect',
  description,
});

const FORM: RawBody = { raw: ['application/x-www-form-urlencoded'], description: 'The form, with its CSRF token.' };

/** A server-rendered page: HTML (or a redirect); a POST takes the form with its CSRF token. */
export function pageOperation(method: HttpMethod, path: string, operationId: string, summary: string): Operation {
  return documented({
    method,
    path,
    operationId,
    summary,
    tag: path.startsWith('/oauth/') ? 'OAuth' : 'Pages',
    auth: 'none',
    html: true,
    ...(method === 'post' ? { body: FORM } : {}),
    success: { 200: html('The page.'), 302: redirect(), 303: redirect() },
  });
}

/** A page and its form on one path: `get<Name>Page` shows it, `post<Name>Page` takes the form. */
export function pageAndForm(path: string, name: string, pageSummary: string, formSummary: string): Operation[] {
  return [
    pageOperation('get', path, `get${name}Page`, pageSummary),
    pageOperation('post', path, `post${name}Page`, formSummary),
  ];
}
