/**
 * The process's components, opened for the composition root (platform/services.ts): the database (embedded PGlite
 * without DATABASE_URL), the counter store and spend store, Temporal (a dev server without TEMPORAL_ADDRESS), mail,
 * and Stripe (an embedded stripe-mock with its test pages on `npm start`); and the bounded closer that undoes them.
 */
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../db/embedded.js';
import { initOrm } from '../db/mikro-orm.config.js';
import { type WebhooksService } from '../core/billing/webhooks.service.js';
import { createStripeClient } from '../core/billing/stripe.js';
import { EmbeddedPayments } from '../core/billing/embedded-payments.js';
import { startEmbeddedStripe } from '../core/billing/stripe-mock.js';
import { type Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { createCounterStore, RedisCounterStore } from '../core/counters/index.js';
import { MemorySpendStore } from '../core/spend/memory-spend-store.js';
import { RedisSpendStore } from '../core/spend/redis-spend-store.js';
import type { SpendStore } from '../core/spend/spend-store.js';
import { GatewayEvents } from '../core/spend/gateway-events.js';
import { createMailer } from '../core/mail/mailer.js';
import { type Logger } from '../core/logger.js';
import { startDevServer, type DevServer } from './temporal-dev-server.js';
import { TemporalService } from '../core/temporal/temporal.service.js';

const CLOSE_STEP_TIMEOUT_MS = 10_000;
/** The read replica's pool (search's reads only; DATABASE_POOL_MAX when that is smaller). */
const READ_POOL_MAX = 5;

/** Runs the cleanups newest first; each step is bounded, so a component that never answers cannot keep the process. */
export function closer(cleanups: Array<() => Promise<void>>, logger: Logger): () => Promise<void> {
  return async () => {
    for (const fn of cleanups.reverse()) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), CLOSE_STEP_TIMEOUT_MS);
      });
      try {
        if ((await Promise.race([fn(), timeout])) === 'timeout')
          logger.warn('a service did not close in time; moving on');
      } catch (err) {
        logger.warn({ err }, 'error while closing services');
      } finally {
        clearTimeout(timer);
      }
    }
  };
}

/**
 * The components: database (embedded PGlite without DATABASE_URL; and a read replica's ORM with DATABASE_READ_URL),
 * counters, Temporal (a dev server), mail.
 */
export async function openInfrastructure(
  config: Config,
  logger: Logger,
  clock: Clock,
  cleanups: Array<() => Promise<void>>,
  /** The all-in-one's gateway thread holds the memory spend store: this process uses it through this one. */
  memorySpend?: SpendStore,
) {
  let dbUrl: string;
  let poolMax: number;
  if (config.database.kind === 'pglite') {
    const embeddedDb: EmbeddedDatabase = await startEmbeddedDatabase(config.database.dataDir);
    cleanups.push(() => embeddedDb.stop());
    dbUrl = embeddedDb.url;
    poolMax = 1;
  } else {
    dbUrl = config.database.url;
    poolMax = config.database.poolMax;
  }
  const orm = await initOrm({ url: dbUrl, poolMax });
  cleanups.push(() => orm.close(true));
  const readOrm = await openReadOrm(config, orm, cleanups);

  const counters = await createCounterStore(config.counters, logger);
  cleanups.push(() => counters.close());
  const spend: SpendStore =
    counters instanceof RedisCounterStore
      ? new RedisSpendStore(counters.client, { clock })
      : (memorySpend ?? new MemorySpendStore());
  const gatewayEvents = new GatewayEvents(counters, logger, spend);

  let devServer: DevServer | undefined;
  let temporalAddress: string;
  if (config.temporal.kind === 'embedded') {
    devServer = await startDevServer({ ...config.temporal, logger });
    cleanups.push(() => devServer!.stop());
    temporalAddress = devServer.address;
  } else {
    temporalAddress = config.temporal.address;
  }
  const temporal = new TemporalService(
    { address: temporalAddress, namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue },
    logger,
  );
  cleanups.push(() => temporal.close());

  const mailer = createMailer(config.mail, logger);
  cleanups.push(() => mailer.close());
  return {
    orm,
    readOrm,
    counters,
    spend,
    gatewayEvents,
    temporal,
    temporalAddress,
    databaseUrl: dbUrl,
    devServer,
    mailer,
  };
}

export type Infrastructure = Awaited<ReturnType<typeof openInfrastructure>>;

/**
 * What catalog search reads through (platform/services.ts): with DATABASE_READ_URL an ORM of its own on the replica
 * (same entities and options, a small pool, never migrated: it replays the primary's schema), else the primary's.
 */
async function openReadOrm(config: Config, primary: MikroORM, cleanups: Array<() => Promise<void>>): Promise<MikroORM> {
  if (config.database.kind !== 'postgres' || !config.database.readUrl) return primary;
  const { readUrl, poolMax } = config.database;
  const replica = await initOrm({ url: readUrl, poolMax: Math.min(poolMax, READ_POOL_MAX) });
  cleanups.push(() => replica.close(true));
  return replica;
}

/**
 * Stripe: the configured account, or (no key, `npm start`) an embedded stripe-mock with test pages that pay its
 * checkouts; the events they sign go through the real webhook handler, so it gets their secret.
 */
export async function openPayments(
  config: Config,
  logger: Logger,
  orm: MikroORM,
  cleanups: Array<() => Promise<void>>,
  webhooks: () => WebhooksService,
) {
  let stripeSettings = config.stripe;
  let embeddedPayments: EmbeddedPayments | undefined;
  if (!stripeSettings.secretKey && config.temporal.kind === 'embedded') {
    const embeddedStripe = await startEmbeddedStripe(path.dirname(config.temporal.cliPath), logger);
    if (embeddedStripe) {
      cleanups.push(() => embeddedStripe.stop());
      // Its test pages pay the checkouts stripe-mock cannot (core/billing/embedded-payments.ts); the events they
      // sign go through the real webhook handler, so it gets their secret.
      embeddedPayments = new EmbeddedPayments({ orm, publicBase: config.urls.publicBase, webhooks });
      stripeSettings = {
        ...stripeSettings,
        secretKey: embeddedStripe.secretKey,
        apiBase: embeddedStripe.apiBase,
        webhookSecret: embeddedPayments.webhookSecret,
      };
    }
  }
  return { stripeSettings, embeddedPayments, stripe: createStripeClient(stripeSettings) };
}
