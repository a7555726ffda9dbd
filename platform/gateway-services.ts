/**
 * The gateway's own composition root, for the all-in-one's gateway thread (gateway/thread.ts): only
 * what the request handler uses (GatewayServices), opened on the stores the main thread names. No Temporal worker,
 * no payments, no catalog search, no mailer: what `npm start` runs beside the gateway stays on the main thread's loop.
 *
 * The stores: on Postgres and Redis the thread opens its own connections (the same as a separate gateway process). On
 * `npm start`'s embedded defaults the database is the PGlite thread's loopback server (one more client of its one
 * session, db/embedded-thread.js) and the counters are the main thread's, reached over a message port
 * (platform/remote-stores.ts); the memory spend store lives here, with the gateway, and the main thread reaches
 * it the same way.
 */
import { initOrm } from '../db/mikro-orm.config.js';
import { systemClock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { createCounterStore, RedisCounterStore, type CounterStore } from '../core/counters/index.js';
import { HealthService } from '../core/health/health.service.js';
import { KeysService } from '../core/keys/keys.service.js';
import type { Logger } from '../core/logger.js';
import { Metrics } from '../core/metrics/metrics.js';
import { ProviderCredentialsService } from '../core/providers/credentials.service.js';
import { resolveSecretsKey, SecretBox } from '../core/secrets/secret-box.js';
import { GatewayEvents } from '../core/spend/gateway-events.js';
import { MemorySpendStore } from '../core/spend/memory-spend-store.js';
import { RedisSpendStore } from '../core/spend/redis-spend-store.js';
import type { SpendStore } from '../core/spend/spend-store.js';
import { TemporalService } from '../core/temporal/temporal.service.js';
import { DocumentsService } from '../core/terms/documents.service.js';
import { UpstreamGuard } from '../core/upstream/upstream-guard.js';
import { demoNamedUpstream } from '../core/demo/demo-upstream.js';
import { closer } from './infrastructure.js';
import type { GatewayServices } from './services.js';

export interface GatewayServicesOptions {
  logger: Logger;
  /** The database to connect to: the embedded database's loopback address, or config's DATABASE_URL. */
  databaseUrl: string;
  /** The Temporal frontend the main thread uses (its dev server on `npm start`): only /health pings it. */
  temporalAddress: string;
  /** The main thread's counter store (embedded mode); without it the thread opens config's (Redis). */
  counters?: CounterStore;
  metrics?: Metrics;
}

export async function createGatewayServices(
  config: Config,
  options: GatewayServicesOptions,
): Promise<GatewayServices & { close(): Promise<void> }> {
  const { logger } = options;
  const clock = systemClock;
  const cleanups: Array<() => Promise<void>> = [];
  const closeAll = closer(cleanups, logger);
  try {
    // The embedded database is one session shared with the main thread: one connection, as there.
    const poolMax = config.database.kind === 'pglite' ? 1 : config.database.poolMax;
    const orm = await initOrm({ url: options.databaseUrl, poolMax });
    cleanups.push(() => orm.close(true));
    let counters = options.counters;
    if (!counters) {
      const own = await createCounterStore(config.counters, logger);
      cleanups.push(() => own.close());
      counters = own;
    }
    const spend: SpendStore =
      counters instanceof RedisCounterStore ? new RedisSpendStore(counters.client, { clock }) : new MemorySpendStore();
    const events = new GatewayEvents(counters, logger, spend);
    const keys = new KeysService(orm, counters, logger, { spend });
    await keys.start();
    cleanups.push(() => keys.stop());
    const temporal = new TemporalService(
      { address: options.temporalAddress, namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue },
      logger,
    );
    cleanups.push(() => temporal.close());
    const guard = new UpstreamGuard({ allowPrivate: config.upstreamAllowPrivate, named: demoNamedUpstream(config) });
    cleanups.push(() => guard.close());
    const secrets = new SecretBox(resolveSecretsKey(config.secretsKey, config.dataDir).key, config.previousSecretsKeys);
    const metrics = options.metrics ?? new Metrics();
    const dbBackend = config.database.kind === 'pglite' ? 'pglite' : 'postgres';
    return {
      config,
      logger,
      clock,
      metrics,
      orm,
      counters,
      spend,
      keys,
      documents: new DocumentsService(orm, clock, config.urls.publicBase, events),
      providerCredentials: new ProviderCredentialsService({ orm, clock, secrets, events }),
      guard,
      health: new HealthService({ orm, counters, temporal, dbBackend, logger, metrics }),
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
