/** The public `GET /health` report of every surface (health.service.ts `publicHealth`): up or down per component. */
import { z } from 'zod';

const HealthCheck = z.strictObject({ status: z.enum(['up', 'down']) });

export const HealthReportView = z.looseObject({
  status: z.enum(['ok', 'degraded']),
  service: z.string(),
  checks: z.looseObject({ db: HealthCheck, counters: HealthCheck, temporal: HealthCheck }),
});
