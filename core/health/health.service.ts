/** Health of the components a process depends on: database, counter store and Temporal, each with a timeout. */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { CounterStore } from '../counters/index.js';
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
    private readonly deps: { orm: MikroORM; counters: CounterStore; temporal: TemporalService; dbBackend: string },
    private readonly timeoutMs = 2_000,
  ) {}

  async check(service: string): Promise<HealthReport> {
    const [db, counters, temporal] = await Promise.all([
      probe(this.deps.dbBackend, () => this.deps.orm.em.fork().execute('select 1'), this.timeoutMs),
      probe(this.deps.counters.backend, () => this.deps.counters.ping(), this.timeoutMs),
      probe('temporal', () => this.deps.temporal.ping(this.timeoutMs), this.timeoutMs),
    ]);
    const allOk = db.status === 'ok' && counters.status === 'ok' && temporal.status === 'ok';
    return { status: allOk ? 'ok' : 'degraded', service, checks: { db, counters, temporal } };
  }
}
