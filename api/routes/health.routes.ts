/** GET /health on any of our Koa surfaces: up or down for db, counters and temporal in the envelope (no details). */
import type Router from '@koa/router';
import { fail } from '../../core/envelope.js';
import { ServiceUnavailableError } from '../../core/errors.js';
import { HealthReportView } from '../../core/health/health.schemas.js';
import { publicHealth } from '../../core/health/health.service.js';
import type { Services } from '../../platform/services.js';
import type { AppState } from '../context.js';
import { env } from '../openapi/operation.js';
import { mountRoutes, route } from '../openapi/route.js';

interface HealthDeps {
  health: Services['health'];
  surface: string;
}

export const HEALTH_ROUTE = route<'none', undefined, undefined, HealthDeps>(
  {
    method: 'get',
    path: '/health',
    operationId: 'getHealth',
    summary: 'Service status (db, counters, temporal)',
    description: 'Served by the control plane and by the gateway (whose report adds its `pid`).',
    tag: 'Health',
    auth: 'none',
    success: { 200: env(HealthReportView, 'All components are up.') },
  },
  async (ctx, { services }) => {
    const report = publicHealth(await services.health.check(services.surface));
    ctx.set('Cache-Control', 'no-store');
    if (report.status === 'ok') return report;
    ctx.status = 503;
    ctx.body = fail(
      new ServiceUnavailableError('One or more components are unavailable.', { details: { ...report } }),
      ctx.state.requestId,
    );
  },
);

export function healthRoutes(services: Pick<Services, 'health'>, surface: string): Router<AppState> {
  return mountRoutes({ health: services.health, surface }, [HEALTH_ROUTE]);
}
