/**
 * The environment contract's schema (config.ts parses process.env with it): every variable, its type, bounds and
 * default. Nothing else reads it; config.ts turns the parsed environment into the Config.
 */
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

/** A 32-byte key given as 64 hex digits or base64 (undefined when it is neither). */
export function decodeKey(value: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  const b = Buffer.from(value, 'base64');
  return b.length === 32 ? b : undefined;
}

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

export const EnvSchema = z.object({
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
  /** A streaming replica of DATABASE_URL that serves catalog search's reads (docs/operations.md, "Read replica"). */
  DATABASE_READ_URL: z
    .url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// or postgresql:// URL' })
    .optional(),
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
  /** Storefront pages and public catalog JSON reads per client address (ctx.ip) per minute (issue 31). */
  PUBLIC_RATE_LIMIT_PER_MIN: z.coerce.number().int().min(1).max(10_000_000).default(3000),
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

/** The environment once parsed (defaults applied, values converted). */
export type ParsedEnv = z.output<typeof EnvSchema>;
