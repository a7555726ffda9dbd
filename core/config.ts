/**
 * The environment contract (DESIGN.md) parsed once, with zod, into a typed, immutable Config.
 * Nothing else in the codebase reads process.env. A missing variable picks an embedded default
 * (PGlite, the in-process counter store, a spawned Temporal dev server, console mail) outside production;
 * in production the real components are required and a readable error stops the boot.
 */
import path from 'node:path';
import { z } from 'zod';

const boolFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const port = z.coerce.number().int().min(0).max(65535);
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v));

const DAY_MS = 86_400_000;

/** A comma-separated list (blank entries ignored), each entry checked by `entry`. */
const listOf = (entry: z.ZodType<string, string>) =>
  z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(z.array(entry));

/** `scheme://host[:port]`, exactly as a browser sends it in `Origin` (lower-cased, no path). */
const originEntry = z
  .string()
  .refine(
    (v) => URL.canParse(v) && new URL(v).origin === v.toLowerCase(),
    'each must be an origin like https://app.example.com',
  )
  .transform((v) => v.toLowerCase());

/** `host` (any port), `host:port`, `[v6]:port`, or `*` (no Host check). */
const hostEntry = z
  .string()
  .regex(/^(\*|(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?)$/, 'each must be host, host:port or *')
  .transform((v) => v.toLowerCase());

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  /** Replaced by TRUST_PROXY_HOPS: `true` trusted the client-chosen leftmost X-Forwarded-For (refused at boot). */
  TRUST_PROXY: boolFromEnv.optional(),
  /** How many proxies of ours stand in front of this process and append to X-Forwarded-For (0: none). */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATA_DIR: z.string().min(1).default('.data'),
  MIGRATE_ON_START: boolFromEnv.optional(),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),

  /** Prometheus metrics of this process on its own port (`GET /metrics`); off when unset (docs/operations.md). */
  METRICS_PORT: port.optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  API_PORT: port.default(3000),
  GATEWAY_PORT: port.default(3001),
  MCP_PORT: port.default(3002),
  PUBLIC_BASE_URL: httpUrl.optional(),
  GATEWAY_URL: httpUrl.optional(),
  MCP_URL: httpUrl.optional(),
  MCP_SESSIONS_PER_ORG: z.coerce.number().int().min(1).max(10_000).default(20),
  /** The spec's agent-tool session lifetime: 30 days without a request. */
  MCP_SESSION_IDLE_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(365 * DAY_MS)
    .default(30 * DAY_MS),
  MCP_SESSION_TOUCH_MS: z.coerce.number().int().min(0).max(DAY_MS).default(60_000),
  MCP_SESSION_CACHE_MAX: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
  MCP_SESSION_CACHE_IDLE_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(DAY_MS)
    .default(10 * 60_000),
  /** How long a tool waits for a person who accepted a URL elicitation to finish the page (docs/agent-tools.md). */
  MCP_PERSON_WAIT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(DAY_MS)
    .default(5 * 60_000),
  MCP_ALLOWED_ORIGINS: listOf(originEntry),
  MCP_ALLOWED_HOSTS: listOf(hostEntry),

  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// or postgresql:// URL' }).optional(),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }).optional(),
  /** Redis Cluster mode: seed nodes `host:port,…` (the rest of the cluster is discovered). Instead of REDIS_URL. */
  REDIS_CLUSTER_NODES: listOf(
    z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'each must be host:port'),
  ),
  /** `off` skips the start check of Redis's eviction and persistence settings (a managed Redis refusing CONFIG). */
  REDIS_REQUIREMENTS_CHECK: z.enum(['on', 'off']).default('on'),
  REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_-]{1,64}$/, 'letters, digits, ":", "_" or "-" only')
    .default('svc:'),

  /** Catalog search's semantic ranker: `words` (word vectors, the default) or `sentence` (a local model directory). */
  SEARCH_EMBEDDER: z.enum(['words', 'sentence']).default('words'),
  SEARCH_MODEL_DIR: optionalString,
  /** Import the public directory into an empty catalog at start (also `npm start -- --demo`). */
  DEMO_CATALOG: boolFromEnv.default(false),

  TEMPORAL_ADDRESS: z
    .string()
    .regex(/^[^\s:/]+:\d{1,5}$/, 'must be host:port')
    .optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('marketplace'),
  TEMPORAL_CLI_PATH: z.string().min(1).default('.tools/bin/temporal'),
  TEMPORAL_DEV_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  TEMPORAL_UI_URL: httpUrl.optional(),

  SMTP_URL: z.url({ protocol: /^smtps?$/, error: 'must be an smtp:// or smtps:// URL' }).optional(),
  MAIL_FROM: z.string().min(3).default('Marketplace <no-reply@localhost>'),

  STRIPE_SECRET_KEY: optionalString,
  STRIPE_WEBHOOK_SECRET: optionalString,
  STRIPE_API_BASE: httpUrl.optional(),

  /** Seals upstream credentials at rest (core/secrets); also keys the OAuth cookies and the login-code hashes. */
  SECRETS_KEY: z
    .string()
    .refine((v) => decodeKey(v) !== undefined, 'must be 32 bytes as 64 hex characters or base64')
    .optional(),
  /**
   * Earlier SECRETS_KEYs, comma-separated, newest first: values sealed under them still open until
   * `npm run admin -- rotate-secrets` re-seals them (docs/operations.md, "Rotating SECRETS_KEY").
   */
  SECRETS_KEY_PREVIOUS: z
    .string()
    .transform((v, ctx) => {
      const entries = v.split(',').map((s) => s.trim());
      const keys: Buffer[] = [];
      entries.forEach((entry, i) => {
        const key = decodeKey(entry);
        if (key) keys.push(key);
        else
          ctx.addIssue({
            code: 'custom',
            message:
              `entry ${i + 1} of ${entries.length} must be 32 bytes as 64 hex characters or base64 ` +
              '(a comma-separated list of keys)',
          });
      });
      return keys;
    })
    .optional(),
  UPSTREAM_ALLOW_PRIVATE: boolFromEnv.default(false),
  GATEWAY_RATE_LIMIT_PER_MIN: z.coerce.number().int().min(1).max(1_000_000).default(300),
  GATEWAY_MAX_REQUEST_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(100 * 1024 * 1024)
    .default(1024 * 1024),
  GATEWAY_MAX_RESPONSE_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(1024 * 1024 * 1024)
    .default(10 * 1024 * 1024),
  GATEWAY_UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(30_000),
  GATEWAY_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  GATEWAY_SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  /** Admit calls against leases (core/spend/leases.ts) where the slack allows; false: every call admitted on its own. */
  GATEWAY_LEASES: boolFromEnv.default(true),
  /** A usage event a drainer took and has not put into Postgres for this long is claimed by another (docs/durability.md). */
  GATEWAY_DRAIN_CLAIM_IDLE_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  /** How often each gateway process looks for such events. */
  GATEWAY_DRAIN_CLAIM_INTERVAL_MS: z.coerce.number().int().min(100).max(60_000).default(2_000),
  /** Gateway processes (node:cluster workers sharing the port) a `gateway`-only start forks; also `--processes N`. */
  GATEWAY_PROCESSES: z.coerce.number().int().min(1).max(256).default(1),
  REGISTER_RATE_LIMIT_PER_HOUR: z.coerce.number().int().min(1).max(1_000_000).default(60),
  SIGNUP_RATE_LIMIT_PER_HOUR: z.coerce.number().int().min(1).max(1_000_000).default(10),
  PRICE_INCREASE_NOTICE_DAYS: z.coerce.number().min(0).max(365).default(7),
  PUBLISH_WAIT_MS: z.coerce.number().int().min(100).max(300_000).default(30_000),
  PLATFORM_FEE_PERCENT: z.coerce.number().int().min(0).max(100).default(20),
  USAGE_CHARGE_THRESHOLD_CENTS: z.coerce.number().int().min(50).max(100_000_000).default(5_000),
  CARD_CREDIT_LIMIT_CENTS: z.coerce.number().int().min(0).max(100_000_000).default(10_000),
  PAYOUT_MINIMUM_CENTS: z.coerce.number().int().min(1).max(100_000_000).default(100),
  /**
   * Usage events (one row per call) older than this are dropped a month-partition at a time; ledger rows are kept
   * forever. At least 180 days: a chargeback (up to 120 days) and an unpaid card usage charge read the calls they
   * concern.
   */
  USAGE_RETENTION_DAYS: z.coerce.number().int().min(180).max(36_500).default(400),

  CHALLENGE_VERIFY_URL: httpUrl.optional(),
  CHALLENGE_SECRET: optionalString,
});

export type Env = z.input<typeof EnvSchema>;

function hostPort(entry: string): { host: string; port: number } {
  const at = entry.lastIndexOf(':');
  return { host: entry.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(entry.slice(at + 1)) };
}

function decodeKey(value: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  const b = Buffer.from(value, 'base64');
  return b.length === 32 ? b : undefined;
}

export type DatabaseConfig = { kind: 'postgres'; url: string; poolMax: number } | { kind: 'pglite'; dataDir: string };
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

  const dataDir = path.resolve(cwd, e.DATA_DIR);
  const localUrl = (p: number) => `http://localhost:${p}`;
  // The addresses people are given (the README, mail links, the pages): one host, so one cookie jar (issue 22).
  const ownUrl = (p: number) => `http://127.0.0.1:${p}`;
  const stripTrailingSlash = (u: string) => u.replace(/\/+$/, '');

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
    urls: {
      publicBase: stripTrailingSlash(e.PUBLIC_BASE_URL ?? ownUrl(e.API_PORT)),
      gateway: stripTrailingSlash(e.GATEWAY_URL ?? ownUrl(e.GATEWAY_PORT)),
      mcp: stripTrailingSlash(e.MCP_URL ?? ownUrl(e.MCP_PORT)),
      temporalUi: e.TEMPORAL_UI_URL
        ? stripTrailingSlash(e.TEMPORAL_UI_URL)
        : e.TEMPORAL_ADDRESS
          ? undefined
          : localUrl(e.TEMPORAL_UI_PORT),
    },
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
    database: e.DATABASE_URL
      ? { kind: 'postgres', url: e.DATABASE_URL, poolMax: e.DATABASE_POOL_MAX }
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
    stripe: { secretKey: e.STRIPE_SECRET_KEY, webhookSecret: e.STRIPE_WEBHOOK_SECRET, apiBase: e.STRIPE_API_BASE },
    secretsKey: e.SECRETS_KEY ? decodeKey(e.SECRETS_KEY) : undefined,
    previousSecretsKeys: e.SECRETS_KEY_PREVIOUS ?? [],
    upstreamAllowPrivate: e.UPSTREAM_ALLOW_PRIVATE,
    providers: {
      priceIncreaseNoticeMs: Math.round(e.PRICE_INCREASE_NOTICE_DAYS * 86_400_000),
      publishWaitMs: e.PUBLISH_WAIT_MS,
    },
    limits: {
      gatewayRatePerMin: e.GATEWAY_RATE_LIMIT_PER_MIN,
      registerPerHour: e.REGISTER_RATE_LIMIT_PER_HOUR,
      signupPerHour: e.SIGNUP_RATE_LIMIT_PER_HOUR,
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
  } satisfies Config);
}
