/** GET /v1/usage: the org's metered calls, filtered by `from`/`to`, paginated, with range totals in meta. */
import { z } from 'zod';
import { UsageEvent, UsageMeta } from '../../core/usage/usage.schemas.js';
import { UsageQuery } from '../../core/usage/usage.service.js';
import type { Services } from '../../platform/services.js';
import { env } from '../openapi/operation.js';
import { mountRoutes, route, withMeta } from '../openapi/route.js';

export const USAGE_ROUTES = [
  route(
    {
      method: 'get',
      path: '/v1/usage',
      operationId: 'listUsage',
      summary: "The org's metered calls, with range totals",
      tag: 'Usage',
      auth: 'bearer',
      scope: 'usage:read',
      query: UsageQuery,
      success: { 200: env(z.array(UsageEvent), 'A page of usage events.', UsageMeta) },
      errors: [404],
    },
    async (_ctx, { services, principal, query }) => {
      const page = await services.usage.list(principal, query);
      return withMeta(page.items, { pagination: page.pagination, range: page.range, summary: page.summary });
    },
  ),
];

export const usageRoutes = (services: Services) => mountRoutes(services, USAGE_ROUTES);
