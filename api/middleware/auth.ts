/**
 * Authentication for the control plane's JSON API: the caller's `Authorization: Bearer` credential becomes
 * `ctx.state.principal` (the pages' session cookie is ignored here; see core/auth/authenticator.ts).
 * Every route declares what it needs with one helper, `auth(services, need)`: nothing, a scope (403 names it when
 * missing), or a session (for the human-only steps; an API key gets 403). The org's answered calls are in Postgres
 * before the route runs (core/spend/usage-barrier.ts).
 */
import type { Middleware } from 'koa';
import { requireScope, type Principal, type Scope } from '../../core/auth/scopes.js';
import { ForbiddenError } from '../../core/errors.js';
import { untilUsageDrained } from '../../core/spend/usage-barrier.js';
import type { Services } from '../../platform/services.js';
import type { AppState } from '../context.js';

export type AuthNeed = Scope | { scope?: Scope; session: true } | undefined;

export function auth(services: Pick<Services, 'authenticator' | 'spend'>, need?: AuthNeed): Middleware<AppState> {
  const scope = typeof need === 'string' ? need : need?.scope;
  const sessionOnly = typeof need === 'object' && need.session;
  return async (ctx, next) => {
    const principal = await services.authenticator.authenticate({
      authorization: ctx.get('authorization') || undefined,
    });
    if (scope) requireScope(principal, scope);
    if (sessionOnly && principal.type !== 'session') {
      throw new ForbiddenError('This step needs a signed-in person: use a session token, not an API key.', {
        details: { required_credential: 'session' },
      });
    }
    ctx.state.principal = principal;
    ctx.set('Cache-Control', 'no-store');
    // The org's calls answered so far are in Postgres before anything of it is read (read-your-writes).
    await untilUsageDrained(services.spend, principal.orgId);
    await next();
  };
}

/** The principal set by `auth()`; a route without it is a programming error. */
export function principalOf(state: AppState): Principal {
  if (!state.principal) throw new Error('route used principalOf() without auth()');
  return state.principal;
}

export function clientOf(ctx: { ip: string; get(name: string): string }): { ip: string; userAgent?: string } {
  return { ip: ctx.ip, userAgent: ctx.get('user-agent') || undefined };
}

/** For public routes that say more to a signed-in caller: authenticate when a credential is sent, else anonymous. */
export function optionalAuth(services: Pick<Services, 'authenticator' | 'spend'>): Middleware<AppState> {
  const required = auth(services);
  return async (ctx, next) => {
    if (ctx.get('authorization')) await required(ctx, next);
    else await next();
  };
}
