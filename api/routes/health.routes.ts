/** GET /health on any of our Koa surfaces: up or down for db, counters and temporal in the envelope (no details). */
import Router from '@koa/router';
import { fail, ok } from '../../core/envelope.js';
import { ServiceUnavailableError } from '../../core/errors.js';
import { publicHealth } from '../../core/health/health.service.js';
import type { Services } from '../../platform/services.js';
import type { AppState } from '../context.js';

export function healthRoutes(services: Pick<Services, 'health'>, surface: string): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/health', async (ctx) => {
    const report = publicHealth(await services.health.check(surface));
    ctx.set('Cache-Control', 'no-store');
    if (report.status === 'ok') {
      ctx.body = ok(report, ctx.state.requestId);
      return;
    }
    ctx.status = 503;
    ctx.body = fail(
      new ServiceUnavailableError('One or more components are unavailable.', { details: { ...report } }),
      ctx.state.requestId,
    );
  });
  return router;
}
