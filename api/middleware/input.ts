/**
 * The input rule of core/input.ts applied to every request before any route runs: the decoded path segments, the
 * query names and values, and a parsed JSON body. A raw body (avatar, forms, the Stripe webhook) is the route's own.
 */
import type { Middleware } from 'koa';
import { checkJson, checkPath, checkQuery } from '../../core/input.js';
import type { AppState } from '../context.js';

export function inputRules(): Middleware<AppState> {
  return async (ctx, next) => {
    checkPath(ctx.path);
    checkQuery(ctx.query);
    checkJson(ctx.request.body); // the parsed JSON body (an empty object, or undefined, for any other body)
    await next();
  };
}
