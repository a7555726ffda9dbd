/**
 * Health of the components a process depends on: database, counter store and Temporal, each with a timeout.
 * `check` gives the full report (backends, latencies, the raw error) for operators: a component that is down is
 * logged with its error, and `health_component_up` on the metrics port tracks each one. The public `/health` of
 * every surface answers only `publicHealth(report)`: up or down per component, since a raw driver error names hosts,
 * ports and user names (issue 21 item 7).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { CounterStore } from '../counters/index.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { TemporalService } from '../temporal/temporal.service.js';

export interface ComponentHealth {
  status: 'ok' | 'down';
  backend: string;
  latency_ms?: number;
  error?: string;
}

export interface HealthReport {
  status: 'ok' | 'degraded';
  service: string;
  checks: { db: ComponentHealth; counters: ComponentHealth; temporal: ComponentHealth };
}

type Component = keyof HealthReport['checks'];

/** What anyone may see: the overall status, the service, and up or down per component. */
export interface PublicHealthReport {
  status: 'ok' | 'degraded';
  service: string;
  checks: Record<Component, { status: 'up' | 'down' }>;
}

export function publicHealth(report: HealthReport): PublicHealthReport {
  const view = (c: ComponentHealth) => ({ status: c.status === 'ok' ? ('up' as const) : ('down' as const) });
  const { db, counters, temporal } = report.checks;
  return {
    status: report.status,
    service: report.service,
    checks: { db: view(db), counters: view(counters), temporal: view(temporal) },
  };
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

async function probe(backend: string, fn: () => Promise<unknown>, timeoutMs: number): Promise<ComponentHealth> {
  const t = performance.now();
  try {
    await withTimeout(fn(), timeoutMs, backend);
    return { status: 'ok', backend, latency_ms: Math.round((performance.now() - t) * 10) / 10 };
  } catch (err) {
    return { status: 'down', backend, error: err instanceof Error ? err.message : String(err) };
  }
}

export class HealthService {
  constructor(
    private readonly deps: {
      orm: MikroORM;
      counters: CounterStore;
      temporal: TemporalService;
      dbBackend: string;
      logger?: Logger;
      metrics?: Metrics;
    },
    private readonly timeoutMs = 2_000,
  ) {}

  async check(service: string): Promise<HealthReport> {
    const [db, counters, temporal] = await Promise.all([
      probe(this.deps.dbBackend, () => this.deps.orm.em.fork().execute('select 1'), this.timeoutMs),
      probe(this.deps.counters.backend, () => this.deps.counters.ping(), this.timeoutMs),
      probe('temporal', () => this.deps.temporal.ping(this.timeoutMs), this.timeoutMs),
    ]);
    const checks = { db, counters, temporal };
    for (const [component, c] of Object.entries(checks) as [Component, ComponentHealth][]) {
      this.deps.metrics?.healthUp.set({ component, backend: c.backend }, c.status === 'ok' ? 1 : 0);
      if (c.status === 'down') {
        this.deps.logger?.warn({ service, component, backend: c.backend, error: c.error }, 'health: component down');
      }
    }
    const allOk = db.status === 'ok' && counters.status === 'ok' && temporal.status === 'ok';
    return { status: allOk ? 'ok' : 'degraded', service, checks };
  }
}
