/**
 * `route(declaration, handler)`: a control-plane route declared once. The declaration is the route's OpenAPI
 * operation (api/openapi/operation.ts) and also what the route runs: its auth need and scope pick the `auth()`
 * middleware, its `body` and `query` schemas are parsed before the handler (which receives them typed), and its
 * path is the OpenAPI `{param}` form, registered as koa-router's `:param`. `mountRoutes` registers a file's routes;
 * api/openapi/operations.ts lists the same declarations for the document, so a route cannot exist undocumented.
 *
 * A handler returns the `data` of the success envelope (`withMeta` adds `meta` fields), or nothing when it wrote the
 * response itself (raw JSON, a file, an HTML page). The status is the declaration's lowest success status unless the
 * handler set one (200 or 201 for a merged request, 202 for a lifecycle run still going).
 */
import Router from '@koa/router';
import type { z } from 'zod';
import type { Principal } from '../../core/auth/scopes.js';
import { ok } from '../../core/envelope.js';
import type { Services } from '../../platform/services.js';
import type { AppContext, AppState } from '../context.js';
import { auth, optionalAuth } from '../middleware/auth.js';
import { parseBody, parseQuery } from '../middleware/body.js';
import {
  documented,
  isRawBody,
  koaPath,
  type AuthNeed,
  type Operation,
  type OperationDecl,
  type RawBody,
} from './operation.js';

type AuthDeps = Pick<Services, 'authenticator' | 'spend'>;

/** A route's declaration: its operation, with the schemas it parses kept at their own types. */
export interface RouteDecl<
  A extends AuthNeed,
  B extends z.ZodType | RawBody | undefined,
  Q extends z.ZodObject | undefined,
  P extends string,
> extends Omit<OperationDecl, 'auth' | 'body' | 'query' | 'surface' | 'path'> {
  /** OpenAPI form: `{param}`; the handler receives each parameter in `params`. */
  path: P;
  auth: A;
  body?: B;
  query?: Q;
  /** The handler reads the `Authorization` header itself (the quote): no `auth()` middleware is mounted. */
  handlerAuthenticates?: true;
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

/** `'/v1/apis/{slug}/terms'` → `{ slug: string }`. */
export type PathParams<P extends string> = P extends `${string}{${infer N}}${infer Rest}`
  ? { [K in N]: string } & PathParams<Rest>
  : Record<never, never>;

/** What a handler receives: the parsed body and query, the caller (after `auth()`), the services. */
export interface RouteInput<B, Q, A, S, P extends string = string> {
  params: PathParams<P>;
  body: Parsed<B>;
  query: Parsed<Q>;
  principal: A extends 'bearer' | 'session' ? Principal : Principal | undefined;
  services: S;
}

/** `data` plus extra `meta` fields of the envelope (pagination, totals, …). */
export class WithMeta {
  constructor(
    readonly data: unknown,
    readonly meta: Record<string, unknown>,
  ) {}
}
export const withMeta = (data: unknown, meta: Record<string, unknown>): WithMeta => new WithMeta(data, meta);

export interface RouteDef<S> {
  operation: Operation;
  mount(router: Router<AppState>, services: S): void;
}

export function route<
  A extends AuthNeed,
  B extends z.ZodType | RawBody | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  S = Services,
  P extends string = string,
>(decl: RouteDecl<A, B, Q, P>, handler: (ctx: AppContext, input: RouteInput<B, Q, A, S, P>) => unknown): RouteDef<S> {
  const { handlerAuthenticates, ...opDecl } = decl;
  const operation = documented(opDecl);
  const firstStatus = Math.min(...Object.keys(decl.success).map(Number));
  return {
    operation,
    mount(router, services) {
      const run = async (ctx: AppContext) => {
        const input = {
          params: ctx.params as PathParams<P>,
          body: decl.body && !isRawBody(decl.body) ? parseBody(ctx, decl.body) : undefined,
          query: decl.query ? parseQuery(ctx, decl.query) : undefined,
          principal: ctx.state.principal,
          services,
        } as RouteInput<B, Q, A, S, P>;
        const out = await handler(ctx, input);
        if (out === undefined) return;
        const status = ctx.status === 404 ? firstStatus : ctx.status;
        ctx.body = out instanceof WithMeta ? ok(out.data, ctx.state.requestId, out.meta) : ok(out, ctx.state.requestId);
        ctx.status = status;
      };
      const guard = handlerAuthenticates ? undefined : authFor(operation, services as AuthDeps);
      router.register(koaPath(operation.path), [operation.method.toUpperCase()], guard ? [guard, run] : [run]);
    },
  };
}

function authFor(op: Operation, services: AuthDeps) {
  switch (op.auth) {
    case 'none':
    case 'key':
      return undefined;
    case 'optional':
      return optionalAuth(services);
    case 'bearer':
      return auth(services, op.scope);
    case 'session':
      return auth(services, { scope: op.scope, session: true });
  }
}

/** A router holding these routes, in order. */
export function mountRoutes<S>(
  services: S,
  routes: readonly RouteDef<S>[],
  options?: ConstructorParameters<typeof Router>[0],
): Router<AppState> {
  const router = new Router<AppState>(options);
  for (const r of routes) r.mount(router, services);
  return router;
}
