/**
 * createServices(config): the one composition root of a process. It opens the database (starting embedded PGlite
 * when no DATABASE_URL is set), the counter store, the Temporal client (spawning the dev server when no
 * TEMPORAL_ADDRESS is set), and wires every core service. Nothing else constructs these; close() undoes it all.
 */
import { Metrics } from '../core/metrics/metrics.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import { AccountsService } from '../core/accounts/accounts.service.js';
import { EmailVerificationService } from '../core/accounts/email-verification.service.js';
import { LoginCodesService } from '../core/accounts/login-codes.service.js';
import { SignupService } from '../core/accounts/signup.service.js';
import { OAuthEmailProof } from '../core/oauth/email-proof.js';
import { Authenticator } from '../core/auth/authenticator.js';
import { BillingService } from '../core/billing/billing.service.js';
import { BillingCycleService } from '../core/billing/billing-cycle.service.js';
import { ChargesService } from '../core/billing/charges.service.js';
import { PayoutsService } from '../core/billing/payouts.service.js';
import { EarningsService } from '../core/billing/earnings.service.js';
import { ConnectService } from '../core/billing/connect.service.js';
import { ReconciliationService } from '../core/billing/reconciliation.service.js';
import { WebhooksService } from '../core/billing/webhooks.service.js';
import { type StripeClient } from '../core/billing/stripe.js';
import { type EmbeddedPayments } from '../core/billing/embedded-payments.js';
import { ListingsService } from '../core/catalog/listings/listings.service.js';
import { RollupsService } from '../core/catalog/rollups/rollups.service.js';
import { UsagePartitionsService } from '../core/usage/usage-partitions.js';
import { DemandService } from '../core/demand/demand.service.js';
import { MarketService } from '../core/catalog/rollups/market.service.js';
import { DirectoryImporter } from '../core/catalog/public-apis/public-apis-import.js';
import { createEmbedder } from '../core/catalog/search/embedder.js';
import { ScoresReader } from '../core/catalog/search/scores.js';
import { SearchIndex } from '../core/catalog/search/search-index.js';
import { SearchService } from '../core/catalog/search/search.service.js';
import { systemClock, type Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { replicaBarrier } from '../core/db/replica.js';
import { type CounterStore } from '../core/counters/index.js';
import type { SpendStore } from '../core/spend/spend-store.js';
import { type GatewayEvents } from '../core/spend/gateway-events.js';
import { HealthService } from '../core/health/health.service.js';
import { KeyAdminService } from '../core/keys/key-admin.service.js';
import { KeysService } from '../core/keys/keys.service.js';
import { LedgerService } from '../core/billing/ledger.service.js';
import { type Mailer } from '../core/mail/mailer.js';
import { createLogger, type Logger } from '../core/logger.js';
import { ProfilesService } from '../core/profiles/profiles.service.js';
import { AnalyticsService } from '../core/providers/analytics.service.js';
import { ProviderDirectoryService } from '../core/providers/provider-directory.service.js';
import { ProviderCredentialsService } from '../core/providers/credentials.service.js';
import { ProviderLifecycleService } from '../core/providers/lifecycle.service.js';
import { ProviderEndpointsService } from '../core/providers/endpoints.service.js';
import { ProviderRetirementService } from '../core/providers/retirement.service.js';
import { ProvidersService } from '../core/providers/providers.service.js';
import { PriceChangesService } from '../core/pricing/price-changes.service.js';
import { resolveSecretsKey, SecretBox } from '../core/secrets/secret-box.js';
import { SessionsService } from '../core/sessions/sessions.service.js';
import { type TemporalService } from '../core/temporal/temporal.service.js';
import { DocumentsService } from '../core/terms/documents.service.js';
import { UpstreamGuard, type LookupAll } from '../core/upstream/upstream-guard.js';
import { UsageService } from '../core/usage/usage.service.js';
import { demoNamedUpstream } from '../core/demo/demo-upstream.js';
import { closer, openInfrastructure, openPayments, type Infrastructure } from './infrastructure.js';

export interface Services {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly orm: MikroORM;
  /**
   * What catalog search reads through (the per-process copy's sync, the query's lexemes and typo corrections, the
   * page's fields, prices, scores): a streaming replica of DATABASE_URL when DATABASE_READ_URL is set, else `orm`
   * itself. Never written to (docs/operations.md, "Read replica").
   */
  readonly readOrm: MikroORM;
  readonly counters: CounterStore;
  /** The gateway's fast money state (reservations, spend, idempotency, rate windows). */
  readonly spend: SpendStore;
  /** Tells every gateway that an org or a listing it caches changed (core/spend/gateway-events.ts). */
  readonly gatewayEvents: GatewayEvents;
  readonly temporal: TemporalService;
  /** This process's operators' metrics (served on METRICS_PORT by scripts/start.ts). */
  readonly metrics: Metrics;
  readonly mailer: Mailer;
  readonly ledger: LedgerService;
  readonly keys: KeysService;
  readonly keyAdmin: KeyAdminService;
  readonly sessions: SessionsService;
  readonly authenticator: Authenticator;
  readonly accounts: AccountsService;
  readonly signup: SignupService;
  readonly emailVerification: EmailVerificationService;
  readonly loginCodes: LoginCodesService;
  /** The OAuth authorize page's proof of email (a sign-in code, no session). */
  readonly oauthEmailProof: OAuthEmailProof;
  readonly profiles: ProfilesService;
  readonly usage: UsageService;
  readonly guard: UpstreamGuard;
  readonly secrets: SecretBox;
  readonly stripe: StripeClient | undefined;
  /** Provider listings: create or import, read, edit. */
  readonly providers: ProvidersService;
  /** A listing's verify, publish and unpublish (and their workflow's activities). */
  readonly providerLifecycle: ProviderLifecycleService;
  /** A listing's upstream credential. */
  readonly providerCredentials: ProviderCredentialsService;
  /** A listing's endpoints after creation: changes, re-import, revisions, removals (and their activities). */
  readonly providerEndpoints: ProviderEndpointsService;
  /** Archive, restore, delete. */
  readonly providerRetirement: ProviderRetirementService;
  /** Endpoint prices and discounts, scheduled increases. */
  readonly priceChanges: PriceChangesService;
  readonly documents: DocumentsService;
  readonly listings: ListingsService;
  /** Catalog search (GET /v1/search), its index and the directory import. */
  readonly search: SearchService;
  readonly searchIndex: SearchIndex;
  readonly directoryImport: DirectoryImporter;
  /** The provider directory (orgs with a public profile); not the public APIs directory import above. */
  readonly providerDirectory: ProviderDirectoryService;
  readonly analytics: AnalyticsService;
  readonly connect: ConnectService;
  readonly billing: BillingService;
  /** The test pages that pay stripe-mock's checkouts; only when payments run embedded (`npm start`, no Stripe key). */
  readonly embeddedPayments: EmbeddedPayments | undefined;
  readonly charges: ChargesService;
  readonly webhooks: WebhooksService;
  readonly reconciliation: ReconciliationService;
  readonly payouts: PayoutsService;
  /** Providers' earnings: queued by the gateway, folded into their ledgers off the hot path. */
  readonly earnings: EarningsService;
  readonly billingCycle: BillingCycleService;
  readonly health: HealthService;
  /** Catalog rollups (stats, scores, ranks, history), run by the `catalog-rollups` schedule. */
  readonly rollups: RollupsService;
  /** usage_events' monthly partitions: created ahead, retired after USAGE_RETENTION_DAYS (`usage-partitions`). */
  readonly usagePartitions: UsagePartitionsService;
  /** Boards, market overview and activity, over the rollups. */
  readonly market: MarketService;
  /** Requests for missing APIs. */
  readonly demand: DemandService;
  /** What actually runs, for the boot banner and /health. */
  readonly runtime: {
    databaseBackend: 'postgres' | 'pglite';
    temporalUiUrl?: string;
    /** The database this process connects to (the embedded one's loopback address on `npm start`). */
    databaseUrl: string;
    /** The Temporal frontend (the dev server's on `npm start`). */
    temporalAddress: string;
  };
  close(): Promise<void>;
}

/**
 * What the gateway's request handler (gateway/app.ts) uses of the services: a whole Services satisfies it, and the
 * all-in-one's gateway thread builds only this (platform/gateway-services.ts).
 */
export type GatewayServices = Pick<
  Services,
  | 'config'
  | 'logger'
  | 'clock'
  | 'metrics'
  | 'orm'
  | 'counters'
  | 'spend'
  | 'keys'
  | 'documents'
  | 'providerCredentials'
  | 'guard'
  | 'health'
>;

export interface ServiceOptions {
  logger?: Logger;
  /** One registry per process even when several service stacks share it (tests). */
  metrics?: Metrics;
  /** Tests inject a ManualClock to move time (code expiry, UTC days). */
  clock?: Clock;
  /** The all-in-one's gateway thread holds the memory spend store (gateway/thread.ts). */
  memorySpend?: SpendStore;
  /** Test seams of the SSRF guard: DNS resolution, and loopback addresses to treat as public. */
  upstream?: { lookup?: LookupAll; trustedAddresses?: readonly string[] };
}

export async function createServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const clock = options.clock ?? systemClock;
  const cleanups: Array<() => Promise<void>> = [];
  const closeAll = closer(cleanups, logger);

  try {
    const infra = await openInfrastructure(config, logger, clock, cleanups, options.memorySpend);
    const people = await peopleServices(config, clock, logger, infra, cleanups);
    const guard = new UpstreamGuard({
      allowPrivate: config.upstreamAllowPrivate,
      lookup: options.upstream?.lookup,
      trustedAddresses: options.upstream?.trustedAddresses,
      // The demo's own upstream, allowed by name while the demo is on (core/demo/demo-upstream.ts).
      named: demoNamedUpstream(config),
    });
    cleanups.push(() => guard.close());
    const secretsKey = resolveSecretsKey(config.secretsKey, config.dataDir);
    if (secretsKey.generated)
      logger.warn({ dir: config.dataDir }, 'SECRETS_KEY is not set: generated a development key');
    const secrets = new SecretBox(secretsKey.key, config.previousSecretsKeys);
    // The embedded test pages reach the webhook handler, made below, only once requests arrive.
    const payments = await openPayments(config, logger, infra.orm, cleanups, () => money.webhooks);
    const catalog = catalogServices(config, clock, logger, { ...infra, ...people, guard, secrets });
    const money = moneyServices(config, clock, logger, { ...infra, ...people, ...payments, ...catalog });
    const metrics = options.metrics ?? new Metrics();
    const { orm, counters, temporal } = infra;
    const dbBackend = config.database.kind === 'pglite' ? 'pglite' : 'postgres';
    const health = new HealthService({ orm, counters, temporal, dbBackend, logger, metrics });

    let closed: Promise<void> | undefined;
    const { devServer, temporalAddress, databaseUrl, ...infraServices } = infra;
    return {
      config,
      logger,
      clock,
      metrics,
      ...infraServices,
      ...people,
      guard,
      secrets,
      stripe: payments.stripe,
      ...catalog,
      ...money,
      embeddedPayments: payments.embeddedPayments,
      health,
      runtime: {
        databaseBackend: config.database.kind === 'pglite' ? 'pglite' : 'postgres',
        temporalUiUrl: devServer?.uiUrl,
        databaseUrl,
        temporalAddress,
      },
      close: () => (closed ??= closeAll()),
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/** Accounts, sessions and keys (the key cache starts here), the ledger and usage. */
async function peopleServices(
  config: Config,
  clock: Clock,
  logger: Logger,
  { orm, counters, spend, temporal, mailer }: Infrastructure,
  cleanups: Array<() => Promise<void>>,
) {
  const ledger = new LedgerService(orm);
  const keys = new KeysService(orm, counters, logger, { spend });
  await keys.start();
  cleanups.push(() => keys.stop());
  const keyAdmin = new KeyAdminService(orm, keys, clock);
  const sessions = new SessionsService(orm, clock);
  const authenticator = new Authenticator(keys, sessions);
  const accounts = new AccountsService({ orm, keys, counters, limits: config.limits });
  const identityDeps = { orm, config, clock, counters, keys, sessions, temporal, mailer, logger };
  const emailVerification = new EmailVerificationService(identityDeps);
  const loginCodes = new LoginCodesService(identityDeps, emailVerification);
  const signup = new SignupService(identityDeps, loginCodes);
  const oauthEmailProof = new OAuthEmailProof(loginCodes, emailVerification);
  const profiles = new ProfilesService(orm, config.urls.publicBase);
  const usage = new UsageService(orm, clock);
  return {
    ledger,
    keys,
    keyAdmin,
    sessions,
    authenticator,
    accounts,
    signup,
    emailVerification,
    loginCodes,
    oauthEmailProof,
    profiles,
    usage,
  };
}

/** Providers' listings: create and edit, credential, lifecycle, prices, endpoint changes, retirement. */
function listingServices(
  config: Config,
  clock: Clock,
  logger: Logger,
  deps: Infrastructure & { guard: UpstreamGuard; secrets: SecretBox; searchIndex: SearchIndex },
) {
  const { orm, temporal, gatewayEvents: events, counters, guard, secrets, searchIndex } = deps;
  const providers = new ProvidersService({ orm, config, clock, guard, events, logger, searchIndex });
  const providerCredentials = new ProviderCredentialsService({ orm, clock, secrets, events });
  const providerLifecycle = new ProviderLifecycleService({
    ...{ orm, config, clock, guard, temporal, events, logger, searchIndex },
    credentials: providerCredentials,
  });
  const priceChanges = new PriceChangesService({ orm, config, clock, temporal, events });
  const providerEndpoints = new ProviderEndpointsService({
    ...{ orm, config, clock, guard, temporal, events, counters, logger, searchIndex },
  });
  const providerRetirement = new ProviderRetirementService({ orm, config, clock, events });
  return { providers, providerCredentials, providerLifecycle, priceChanges, providerEndpoints, providerRetirement };
}

/** The catalog: search and its index, the directory, providers' listings and documents, rollups, market, demand. */
function catalogServices(
  config: Config,
  clock: Clock,
  logger: Logger,
  deps: Infrastructure & Awaited<ReturnType<typeof peopleServices>> & { guard: UpstreamGuard; secrets: SecretBox },
) {
  const { orm, readOrm, gatewayEvents, mailer, keys, authenticator, spend, profiles, usage, counters, guard } = deps;
  const embedder = createEmbedder(config.search);
  // The index writes api_search on the primary; search reads through readOrm (a replica with DATABASE_READ_URL).
  const searchIndex = new SearchIndex({ orm, embedder });
  const scores = new ScoresReader(readOrm);
  const search = new SearchService({
    orm: readOrm,
    embedder,
    index: searchIndex,
    scores,
    logger,
    replicaCaughtUp: replicaBarrier(orm, readOrm, logger),
  });
  const directoryImport = new DirectoryImporter({ orm, index: searchIndex, logger });
  const listing = listingServices(config, clock, logger, { ...deps, searchIndex });
  const documents = new DocumentsService(orm, clock, config.urls.publicBase, gatewayEvents);
  const listings = new ListingsService({ orm, config, clock, documents, keys, authenticator, spend });
  const providerDirectory = new ProviderDirectoryService({ orm, clock, profiles });
  const demand = new DemandService({ orm, clock, mailer, logger, counters, publicBase: config.urls.publicBase });
  const rollups = new RollupsService({ orm, clock, logger });
  const usagePartitions = new UsagePartitionsService({
    orm,
    clock,
    logger,
    retentionDays: config.usage.retentionDays,
    rollupsWatermark: () => rollups.watermark(),
  });
  const market = new MarketService({ orm, clock });
  const analytics = new AnalyticsService({
    ...{ orm, usage, demand, guard },
    payoutMinimumCents: config.billing.payoutMinimumCents,
  });
  return {
    ...listing,
    documents,
    listings,
    search,
    searchIndex,
    directoryImport,
    providerDirectory,
    analytics,
    rollups,
    usagePartitions,
    market,
    demand,
  };
}

/** Billing: Connect, checkouts, charges, webhooks, the books check, payouts and providers' earnings. */
function moneyServices(
  config: Config,
  clock: Clock,
  logger: Logger,
  deps: Infrastructure &
    Awaited<ReturnType<typeof peopleServices>> &
    Awaited<ReturnType<typeof openPayments>> &
    ReturnType<typeof catalogServices>,
) {
  const { orm, temporal, gatewayEvents, mailer, ledger, stripe, stripeSettings, embeddedPayments } = deps;
  const connect = new ConnectService({ orm, config, stripe, temporal });
  const billing = new BillingService({ orm, config, stripe, embedded: embeddedPayments });
  const charges = new ChargesService({ orm, stripe, ledger, mailer, events: gatewayEvents, logger });
  const earnings = new EarningsService({ orm, logger });
  const webhooks = new WebhooksService({
    orm,
    config: embeddedPayments ? { ...config, stripe: stripeSettings } : config,
    clock,
    ledger,
    connect,
    temporal,
    events: gatewayEvents,
    logger,
    earnings,
  });
  const reconciliation = new ReconciliationService({ orm, ledger, clock, logger });
  const payouts = new PayoutsService({ orm, config, stripe, ledger, events: gatewayEvents, logger, earnings });
  const billingCycle = new BillingCycleService({ orm, config, clock, payouts });
  return { connect, billing, charges, webhooks, reconciliation, payouts, earnings, billingCycle };
}
