/**
 * The environment contract (DESIGN.md) parsed once, with zod, into a typed, immutable Config.
 * Nothing else in the codebase reads process.env. A missing variable picks an embedded default
 * (PGlite, the in-process counter store, a spawned Temporal dev server, console mail) outside production;
 * in production the real components are required and a readable error stops the boot.
 */
import path from 'node:path';
import { decodeKey, EnvSchema, type ParsedEnv } from './config-env.js';

export type { Env } from './config-env.js';

function hostPort(entry: string): { host: string; port: number } {
  const at = entry.lastIndexOf(':');
  return { host: entry.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(entry.slice(at + 1)) };
}

/** `readUrl` (DATABASE_READ_URL): a streaming replica of `url` that serves catalog search's reads. */
export type DatabaseConfig =
  { kind: 'postgres'; url: string; poolMax: number; readUrl?: string } | { kind: 'pglite'; dataDir: string };
export type CounterConfig =
  | { kind: 'redis'; url: string; keyPrefix: string }
  | { kind: 'redis-cluster'; nodes: { host: string; port: number }[]; keyPrefix: string }
  | { kind: 'memory'; keyPrefix: string };
export type TemporalConfig =
  | { kind: 'remote'; address: string; namespace: string; taskQueue: string }
  | {
      kind: 'embedded';
      namespace: string;
      taskQueue: string;
      cliPath: string;
      port: number;
      uiPort: number;
      dbFile: string;
    };
export type MailConfig = { kind: 'smtp'; url: string; from: string } | { kind: 'console'; from: string };

export interface Config {
  readonly env: 'development' | 'production' | 'test';
  readonly host: string;
  /** TRUST_PROXY_HOPS: proxies of ours in front (platform/runtime/proxy-trust.ts); 0 trusts no forwarded header. */
  readonly trustProxyHops: number;
  readonly logLevel: string;
  readonly dataDir: string;
  /** Apply pending migrations at boot; undefined lets the launcher decide (the all-in-one mode does). */
  readonly migrateOnStart?: boolean;
  readonly shutdownGraceMs: number;
  readonly search: { readonly embedder: 'words' | 'sentence'; readonly modelDir?: string };
  readonly demoCatalog: boolean;
  readonly ports: { readonly api: number; readonly gateway: number; readonly mcp: number };
  /** METRICS_PORT / METRICS_HOST: this process's Prometheus endpoint, or undefined (off). */
  readonly metrics?: { readonly port: number; readonly host: string };
  readonly urls: {
    readonly publicBase: string;
    readonly gateway: string;
    readonly mcp: string;
    /** The Temporal Web UI, for links (TEMPORAL_UI_URL; the embedded dev server's UI by default). */
    readonly temporalUi?: string;
  };
  readonly mcp: {
    /** Open MCP sessions an org may hold; opening one more ends the org's least recently used idle session. */
    readonly sessionsPerOrg: number;
    /** An MCP session with no request for this long has expired (30 days, the spec's lifetime). */
    readonly sessionIdleMs: number;
    /** A session's stored last-seen time is rewritten at most this often (0: on every request). */
    readonly sessionTouchMs: number;
    /** Live sessions (server + transport) one process keeps in memory; the least recently used beyond it are dropped. */
    readonly cacheMax: number;
    /** A live session unused for this long is dropped from memory (it stays stored; the next request rebuilds it). */
    readonly cacheIdleMs: number;
    /** How long a tool waits for a person to finish a page they accepted to open (URL elicitation). */
    readonly personWaitMs: number;
    /** Origins besides the MCP URL's own whose browser requests are accepted (MCP_ALLOWED_ORIGINS). */
    readonly allowedOrigins: readonly string[];
    /** Host headers besides the MCP URL's host (and loopback forms) that are accepted; `*` turns the check off. */
    readonly allowedHosts: readonly string[];
  };
  readonly database: DatabaseConfig;
  readonly counters: CounterConfig;
  /** REDIS_REQUIREMENTS_CHECK (core/spend/redis-requirements.ts). */
  readonly redisRequirementsCheck: 'on' | 'off';
  readonly temporal: TemporalConfig;
  readonly mail: MailConfig;
  readonly stripe: { readonly secretKey?: string; readonly webhookSecret?: string; readonly apiBase?: string };
  readonly secretsKey?: Buffer;
  /** SECRETS_KEY_PREVIOUS: keys that still open sealed values and verify OAuth cookies and login codes. */
  readonly previousSecretsKeys: readonly Buffer[];
  readonly upstreamAllowPrivate: boolean;
  readonly providers: {
    /** How long a price increase on a live listing waits before it applies (fractions allowed, for tests). */
    readonly priceIncreaseNoticeMs: number;
    /** How long the verify/publish routes wait for their workflow before answering 202. */
    readonly publishWaitMs: number;
  };
  readonly limits: {
    readonly gatewayRatePerMin: number;
    readonly registerPerHour: number;
    readonly signupPerHour: number;
    /** Public catalog reads (storefront pages, public catalog JSON routes) per client address per minute. */
    readonly publicReadsPerMin: number;
  };
  readonly gateway: {
    readonly maxRequestBytes: number;
    readonly maxResponseBytes: number;
    readonly upstreamTimeoutMs: number;
    readonly connectTimeoutMs: number;
    /** How often each gateway process looks for reservations nobody settled (a gateway died mid-call). */
    readonly sweepIntervalMs: number;
    /** Leases (core/spend/leases.ts) on a store that supports them. */
    readonly leases: boolean;
    /** Usage events unacknowledged this long are claimed by another drainer; looked for this often. */
    readonly drainClaimIdleMs: number;
    readonly drainClaimIntervalMs: number;
    /** Worker processes a gateway-only start runs (node:cluster, one shared port); 1 serves in the launcher itself. */
    readonly processes: number;
  };
  readonly billing: {
    /** Share of each paid call's price kept by the platform (PLATFORM_FEE_PERCENT, whole percent). */
    readonly platformFeePercent: number;
    /** Card-on-file orgs are charged once their unpaid usage reaches this (and at every month end). */
    readonly usageChargeThresholdCents: number;
    /** How far a card-billed org may run up unpaid usage before paid calls get 402 (per-org override: operators). */
    readonly cardCreditLimitCents: number;
    /** Providers' balances under this are carried to the next payout. */
    readonly payoutMinimumCents: number;
  };
  readonly usage: {
    /** usage_events partitions entirely older than this many days are retired (core/usage/usage-partitions.ts). */
    readonly retentionDays: number;
  };
  readonly challenge: { readonly verifyUrl?: string; readonly secret?: string };
}

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parse an environment (process.env by default) into a Config, or throw a ConfigError listing every problem.
 * `overrides` are command-line settings (the launcher's `--processes N`) that win over the environment.
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  cwd = process.cwd(),
  overrides: Record<string, string | undefined> = {},
): Config {
  // Treat empty strings as unset: `FOO= npm start` should mean "default", not "invalid".
  const cleaned: Record<string, string> = {};
  for (const source of [env, overrides])
    for (const [k, v] of Object.entries(source)) if (v !== undefined && v !== '') cleaned[k] = v;

  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`));
  }
  const e = parsed.data;
  checkCombinations(e);

  const dataDir = path.resolve(cwd, e.DATA_DIR);

  return Object.freeze({
    env: e.NODE_ENV,
    host: e.HOST,
    trustProxyHops: e.TRUST_PROXY_HOPS,
    logLevel: e.LOG_LEVEL,
    dataDir,
    migrateOnStart: e.MIGRATE_ON_START,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    search: {
      embedder: e.SEARCH_EMBEDDER,
      modelDir: e.SEARCH_MODEL_DIR ? path.resolve(cwd, e.SEARCH_MODEL_DIR) : undefined,
    },
    demoCatalog: e.DEMO_CATALOG,
    ports: { api: e.API_PORT, gateway: e.GATEWAY_PORT, mcp: e.MCP_PORT },
    metrics: e.METRICS_PORT === undefined ? undefined : { port: e.METRICS_PORT, host: e.METRICS_HOST },
    urls: urlsOf(e),
    mcp: {
      sessionsPerOrg: e.MCP_SESSIONS_PER_ORG,
      sessionIdleMs: e.MCP_SESSION_IDLE_MS,
      sessionTouchMs: e.MCP_SESSION_TOUCH_MS,
      cacheMax: e.MCP_SESSION_CACHE_MAX,
      cacheIdleMs: e.MCP_SESSION_CACHE_IDLE_MS,
      personWaitMs: e.MCP_PERSON_WAIT_MS,
      allowedOrigins: e.MCP_ALLOWED_ORIGINS,
      allowedHosts: e.MCP_ALLOWED_HOSTS,
    },
    ...backendsOf(e, cwd, dataDir),
    stripe: { secretKey: e.STRIPE_SECRET_KEY, webhookSecret: e.STRIPE_WEBHOOK_SECRET, apiBase: e.STRIPE_API_BASE },
    secretsKey: e.SECRETS_KEY ? decodeKey(e.SECRETS_KEY) : undefined,
    previousSecretsKeys: e.SECRETS_KEY_PREVIOUS ?? [],
    upstreamAllowPrivate: e.UPSTREAM_ALLOW_PRIVATE,
    ...limitsOf(e),
  } satisfies Config);
}

/** Refuses combinations of variables that are each valid alone (and, in production, missing components). */
function checkCombinations(e: ParsedEnv): void {
  if (e.REDIS_URL && e.REDIS_CLUSTER_NODES.length > 0) {
    throw new ConfigError([
      'REDIS_CLUSTER_NODES: set either REDIS_URL (one server) or REDIS_CLUSTER_NODES (a cluster)',
    ]);
  }

  if (e.NODE_ENV === 'production') {
    const missing = (
      [
        'DATABASE_URL',
        'REDIS_URL',
        'TEMPORAL_ADDRESS',
        'SMTP_URL',
        'SECRETS_KEY',
        'PUBLIC_BASE_URL',
        'CHALLENGE_VERIFY_URL',
        'CHALLENGE_SECRET',
      ] as const
    ).filter((k) => !e[k] && !(k === 'REDIS_URL' && e.REDIS_CLUSTER_NODES.length > 0));
    const issues = missing.map((k) => `${k}: required when NODE_ENV=production`);
    if (e.UPSTREAM_ALLOW_PRIVATE) issues.push('UPSTREAM_ALLOW_PRIVATE: must not be true when NODE_ENV=production');
    if (issues.length) throw new ConfigError(issues);
  }

  if (e.TRUST_PROXY) {
    throw new ConfigError([
      'TRUST_PROXY: replaced by TRUST_PROXY_HOPS, the number of proxies of yours in front of this process (1 behind ' +
        'one load balancer, 0 when published directly); TRUST_PROXY=true let any client choose its own address',
    ]);
  }

  if (e.DATABASE_READ_URL && !e.DATABASE_URL) {
    throw new ConfigError([
      'DATABASE_READ_URL: needs DATABASE_URL (the primary it replicates) to be set as well; the embedded database ' +
        'has no replica',
    ]);
  }

  if (e.SECRETS_KEY_PREVIOUS?.length && !e.SECRETS_KEY) {
    throw new ConfigError(['SECRETS_KEY_PREVIOUS: needs SECRETS_KEY (the new key) to be set as well']);
  }

  if (e.SEARCH_EMBEDDER === 'sentence' && !e.SEARCH_MODEL_DIR) {
    throw new ConfigError([
      'SEARCH_MODEL_DIR: required when SEARCH_EMBEDDER=sentence (a local sentence-transformer model)',
    ]);
  }

  // Gateway processes share nothing but Postgres and Redis: the embedded database and the in-process counters
  // live inside one process, so a second one would see other balances, rate limits and reservations.
  if (e.GATEWAY_PROCESSES > 1) {
    const embedded = (['DATABASE_URL', 'REDIS_URL'] as const).filter((k) => !e[k]);
    if (embedded.length) {
      throw new ConfigError([
        `GATEWAY_PROCESSES: more than one gateway process needs ${embedded.join(' and ')} (the embedded ` +
          'database and in-process counters cannot be shared between processes)',
      ]);
    }
  }
}

/** The public addresses of the three surfaces, and of the Temporal UI when there is one. */
function urlsOf(e: ParsedEnv): Config['urls'] {
  const localUrl = (p: number) => `http://localhost:${p}`;
  // The addresses people are given (the README, mail links, the pages): one host, so one cookie jar (issue 22).
  const ownUrl = (p: number) => `http://127.0.0.1:${p}`;
  const stripTrailingSlash = (u: string) => u.replace(/\/+$/, '');
  return {
    publicBase: stripTrailingSlash(e.PUBLIC_BASE_URL ?? ownUrl(e.API_PORT)),
    gateway: stripTrailingSlash(e.GATEWAY_URL ?? ownUrl(e.GATEWAY_PORT)),
    mcp: stripTrailingSlash(e.MCP_URL ?? ownUrl(e.MCP_PORT)),
    temporalUi: e.TEMPORAL_UI_URL
      ? stripTrailingSlash(e.TEMPORAL_UI_URL)
      : e.TEMPORAL_ADDRESS
        ? undefined
        : localUrl(e.TEMPORAL_UI_PORT),
  };
}

/** The components: database, counter store, Temporal and mail (embedded ones when none is configured). */
function backendsOf(e: ParsedEnv, cwd: string, dataDir: string) {
  return {
    database: e.DATABASE_URL
      ? {
          kind: 'postgres',
          url: e.DATABASE_URL,
          poolMax: e.DATABASE_POOL_MAX,
          ...(e.DATABASE_READ_URL ? { readUrl: e.DATABASE_READ_URL } : {}),
        }
      : { kind: 'pglite', dataDir: path.join(dataDir, 'pglite') },
    counters: e.REDIS_URL
      ? { kind: 'redis', url: e.REDIS_URL, keyPrefix: e.REDIS_KEY_PREFIX }
      : e.REDIS_CLUSTER_NODES.length > 0
        ? { kind: 'redis-cluster', nodes: e.REDIS_CLUSTER_NODES.map(hostPort), keyPrefix: e.REDIS_KEY_PREFIX }
        : { kind: 'memory', keyPrefix: e.REDIS_KEY_PREFIX },
    redisRequirementsCheck: e.REDIS_REQUIREMENTS_CHECK,
    temporal: e.TEMPORAL_ADDRESS
      ? {
          kind: 'remote',
          address: e.TEMPORAL_ADDRESS,
          namespace: e.TEMPORAL_NAMESPACE,
          taskQueue: e.TEMPORAL_TASK_QUEUE,
        }
      : {
          kind: 'embedded',
          namespace: e.TEMPORAL_NAMESPACE,
          taskQueue: e.TEMPORAL_TASK_QUEUE,
          cliPath: path.resolve(cwd, e.TEMPORAL_CLI_PATH),
          port: e.TEMPORAL_DEV_PORT,
          uiPort: e.TEMPORAL_UI_PORT,
          dbFile: path.join(dataDir, 'temporal.db'),
        },
    mail: e.SMTP_URL ? { kind: 'smtp', url: e.SMTP_URL, from: e.MAIL_FROM } : { kind: 'console', from: e.MAIL_FROM },
  } satisfies Partial<Config>;
}

/** Limits, timeouts and money rules of providers, the gateway, billing and usage. */
function limitsOf(e: ParsedEnv) {
  return {
    providers: {
      priceIncreaseNoticeMs: Math.round(e.PRICE_INCREASE_NOTICE_DAYS * 86_400_000),
      publishWaitMs: e.PUBLISH_WAIT_MS,
    },
    limits: {
      gatewayRatePerMin: e.GATEWAY_RATE_LIMIT_PER_MIN,
      registerPerHour: e.REGISTER_RATE_LIMIT_PER_HOUR,
      signupPerHour: e.SIGNUP_RATE_LIMIT_PER_HOUR,
      publicReadsPerMin: e.PUBLIC_RATE_LIMIT_PER_MIN,
    },
    challenge: { verifyUrl: e.CHALLENGE_VERIFY_URL, secret: e.CHALLENGE_SECRET },
    gateway: {
      maxRequestBytes: e.GATEWAY_MAX_REQUEST_BYTES,
      maxResponseBytes: e.GATEWAY_MAX_RESPONSE_BYTES,
      upstreamTimeoutMs: e.GATEWAY_UPSTREAM_TIMEOUT_MS,
      connectTimeoutMs: e.GATEWAY_CONNECT_TIMEOUT_MS,
      sweepIntervalMs: e.GATEWAY_SWEEP_INTERVAL_MS,
      leases: e.GATEWAY_LEASES,
      drainClaimIdleMs: e.GATEWAY_DRAIN_CLAIM_IDLE_MS,
      drainClaimIntervalMs: e.GATEWAY_DRAIN_CLAIM_INTERVAL_MS,
      processes: e.GATEWAY_PROCESSES,
    },
    billing: {
      platformFeePercent: e.PLATFORM_FEE_PERCENT,
      usageChargeThresholdCents: e.USAGE_CHARGE_THRESHOLD_CENTS,
      cardCreditLimitCents: e.CARD_CREDIT_LIMIT_CENTS,
      payoutMinimumCents: e.PAYOUT_MINIMUM_CENTS,
    },
    usage: { retentionDays: e.USAGE_RETENTION_DAYS },
  } satisfies Partial<Config>;
}
