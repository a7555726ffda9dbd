/** GET /v1/usage: the org's metered calls, filtered by `from`/`to`, paginated, with range totals in meta. */
import Router from '@koa/router';
import { ok } from '../../core/envelope.js';
import type { Services } from '../../platform/services.js';
import { UsageQuery } from '../../core/usage/usage.service.js';
import type { AppState } from '../context.js';
import { auth, principalOf } from '../middleware/auth.js';
import { parseQuery } from '../middleware/body.js';

export function usageRoutes(services: Services): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/v1/usage', auth(services, 'usage:read'), async (ctx) => {
    const page = await services.usage.list(principalOf(ctx.state), parseQuery(ctx, UsageQuery));
    ctx.body = ok(page.items, ctx.state.requestId, {
      pagination: page.pagination,
      range: page.range,
      summary: page.summary,
    });
  });
  return router;
}
