/** Registration and the caller's own org: POST /v1/register, GET /v1/me. */
import Router from '@koa/router';
import { z } from 'zod';
import { ok } from '../../core/envelope.js';
import type { Services } from '../../core/services.js';
import type { AppState } from '../context.js';
import { auth, principalOf } from '../middleware/auth.js';
import { parseBody } from '../middleware/body.js';

/** Registration takes no input; an empty JSON object is tolerated, anything else is refused. */
export const RegisterBody = z.object({}).strict();

export function accountsRoutes(services: Services): Router<AppState> {
  const router = new Router<AppState>();

  router.post('/v1/register', async (ctx) => {
    parseBody(ctx, RegisterBody);
    const result = await services.accounts.register({ ip: ctx.ip });
    ctx.status = 201;
    ctx.set('X-Svc-Key', result.api_key);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = ok(result, ctx.state.requestId);
  });

  router.get('/v1/me', auth(services), async (ctx) => {
    ctx.body = ok(await services.accounts.me(principalOf(ctx.state)), ctx.state.requestId);
  });

  return router;
}
