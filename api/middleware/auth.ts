/**
 * Authentication for the control plane: the bearer's credential becomes `ctx.state.principal`.
 * Every route declares what it needs with `auth(scope?)`; a missing scope is a 403 naming it.
 */
import type { Middleware } from 'koa';
import { parseBearer } from '../../core/auth/bearer.js';
import { requireScope, type Scope } from '../../core/auth/scopes.js';
import { UnauthenticatedError } from '../../core/errors.js';
import type { Services } from '../../core/services.js';
import type { AppState } from '../context.js';

export function auth(services: Pick<Services, 'keys'>, scope?: Scope): Middleware<AppState> {
  return async (ctx, next) => {
    const credential = parseBearer(ctx.get('authorization') || undefined);
    if (credential.type !== 'api_key') {
      // Sessions arrive with the Accounts work; until then a session token is simply not recognised.
      throw new UnauthenticatedError('Unknown or expired session token.');
    }
    const { principal } = await services.keys.authenticate(credential.token);
    if (scope) requireScope(principal, scope);
    ctx.state.principal = principal;
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}

/** The principal set by `auth()`; a route without it is a programming error. */
export function principalOf(state: AppState) {
  if (!state.principal) throw new Error('route used principalOf() without auth()');
  return state.principal;
}
