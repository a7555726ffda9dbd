/**
 * Starts the marketplace's real processes (scripts/start.ts, or `npm start` itself) on random ports and waits until
 * their /health endpoints answer. Each runs in its own process group so a stop reaches every child.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { REDIS_URL, ROOT } from './env.js';
import { NO_TEMPORAL, testRedisPrefix, type TestStack } from './services.js';
import { freePort, waitFor } from './ports.js';

export interface StartOptions {
  /** Roles for scripts/start.ts (default: all). Ignored with `npmStart`. */
  roles?: string[];
  /** Run `npm start` exactly as a user would (all roles, embedded defaults unless env says otherwise). */
  npmStart?: boolean;
  /** With `npmStart`: what follows `npm start` on the command line (`['--', '--demo']`). */
  npmArgs?: string[];
  env?: Record<string, string>;
  /** Give the embedded Temporal dev server its own ports (needed when TEMPORAL_ADDRESS is not set). */
  embeddedTemporal?: boolean;
  readyTimeoutMs?: number;
  /** Fixed ports (default: free ones), e.g. to restart a killed process where its clients expect it. */
  ports?: { api?: number; gateway?: number; mcp?: number };
  /** Where to run (default: this checkout), e.g. a fresh copy of the repository. */
  cwd?: string;
}

export interface RunningProcess {
  child: ChildProcess;
  urls: { api: string; gateway: string; mcp: string; temporalUi?: string };
  output(): string;
  /** Send a signal to the process group and wait for exit; resolves with the exit code (or signal name). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | string | null>;
}

/**
 * The settings a role started with `startProcess` needs to share one marketplace with this test: its database, the
 * test's Redis under a fresh key prefix, the test's Temporal, a fixed SECRETS_KEY, and loopback upstreams allowed.
 */
export function sharedRoleEnv(databaseUrl: string, temporalAddress: string): Record<string, string> {
  return processEnv(databaseUrl, temporalAddress, { SECRETS_KEY: '3a'.repeat(32), UPSTREAM_ALLOW_PRIVATE: 'true' });
}

/** A process on `databaseUrl`, the test Redis under a fresh key prefix and `temporalAddress`; `extra` adds settings. */
export function processEnv(
  databaseUrl: string,
  temporalAddress: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_KEY_PREFIX: testRedisPrefix(),
    TEMPORAL_ADDRESS: temporalAddress,
    ...extra,
  };
}

/**
 * The settings a role started with `startProcess` needs to serve a test stack's marketplace (createTestStack): its
 * database, Redis and key prefix, its SECRETS_KEY, no Temporal, loopback upstreams allowed; `extra` adds or overrides.
 */
export function stackRoleEnv(stack: TestStack, extra: Record<string, string> = {}): Record<string, string> {
  const redis = stack.config.counters;
  return {
    DATABASE_URL: stack.db.url,
    REDIS_URL: redis.kind === 'redis' ? redis.url : REDIS_URL,
    REDIS_KEY_PREFIX: redis.keyPrefix,
    TEMPORAL_ADDRESS: NO_TEMPORAL,
    SECRETS_KEY: '7e'.repeat(32),
    UPSTREAM_ALLOW_PRIVATE: 'true',
    ...extra,
  };
}

/** Two gateway processes (scripts/start.ts's gateway role) on `env`, started side by side. */
export function startGatewayPair(env: Record<string, string>): Promise<[RunningProcess, RunningProcess]> {
  return Promise.all([startProcess({ roles: ['gateway'], env }), startProcess({ roles: ['gateway'], env })]);
}

const INHERITED = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'GOPATH', 'GOMODCACHE', 'GOPROXY', 'GOSUMDB', 'GOFLAGS'];

export async function startProcess(options: StartOptions = {}): Promise<RunningProcess> {
  const api = options.ports?.api ?? (await freePort());
  const gateway = options.ports?.gateway ?? (await freePort());
  const mcp = options.ports?.mcp ?? (await freePort());
  const env: Record<string, string> = {};
  for (const name of INHERITED) if (process.env[name]) env[name] = process.env[name];
  Object.assign(env, {
    API_PORT: String(api),
    GATEWAY_PORT: String(gateway),
    MCP_PORT: String(mcp),
    PUBLIC_BASE_URL: `http://127.0.0.1:${api}`,
    GATEWAY_URL: `http://127.0.0.1:${gateway}`,
    MCP_URL: `http://127.0.0.1:${mcp}`,
    LOG_LEVEL: 'info',
  });
  let temporalUi: string | undefined;
  if (options.embeddedTemporal) {
    const [dev, ui] = [await freePort(), await freePort()];
    Object.assign(env, { TEMPORAL_DEV_PORT: String(dev), TEMPORAL_UI_PORT: String(ui) });
    temporalUi = `http://127.0.0.1:${ui}`;
  }
  Object.assign(env, options.env);

  const command = options.npmStart ? 'npm' : process.execPath;
  const args = options.npmStart
    ? ['start', ...(options.npmArgs ?? [])]
    : ['--import', 'tsx', 'scripts/start.ts', ...(options.roles ?? ['all'])];
  const child = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | string | null>((resolve) =>
    child.once('exit', (code, sig) => resolve(code ?? sig)),
  );
  // With `npm start`, npm exits at once on a signal while the Node grandchild is still shutting down (and logging),
  // so "stopped" means the whole process group is gone, not just the direct child.
  const groupAlive = (): boolean => {
    try {
      process.kill(-child.pid!, 0);
      return true;
    } catch {
      return false;
    }
  };

  const urls = {
    api: `http://127.0.0.1:${api}`,
    gateway: `http://127.0.0.1:${gateway}`,
    mcp: `http://127.0.0.1:${mcp}`,
    temporalUi,
  };
  const roles =
    options.npmStart || !options.roles || options.roles.includes('all') ? ['api', 'gateway', 'mcp'] : options.roles;
  const healthUrls = roles.filter((r) => r in urls && r !== 'worker').map((r) => `${urls[r as 'api']}/health`);

  const stop = async (signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 20_000) => {
    if (!groupAlive()) return exited;
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    }, timeoutMs);
    const code = await exited;
    await waitFor(() => Promise.resolve(!groupAlive()), {
      timeoutMs: timeoutMs + 5_000,
      what: 'the process group to exit',
    });
    clearTimeout(timer);
    await new Promise((r) => setTimeout(r, 50)); // let the last output arrive
    return code;
  };

  // waitFor retries through errors, so an early exit is raced separately: it must fail at once, not at the timeout.
  const exitedEarly = exited.then((code) => Promise.reject(new Error(`process exited with ${code}`)));
  exitedEarly.catch(() => undefined); // also settles (harmlessly) when the process is stopped later
  try {
    await Promise.race([
      exitedEarly,
      waitFor(
        async () => {
          for (const url of healthUrls) {
            const res = await fetch(url).catch(() => undefined);
            if (!res) return false;
            await res.arrayBuffer();
          }
          return out.includes('"msg":"ready"');
        },
        { timeoutMs: options.readyTimeoutMs ?? 90_000, intervalMs: 200, what: 'the marketplace processes' },
      ),
    ]);
  } catch (err) {
    await stop('SIGKILL');
    throw new Error(`${(err as Error).message}\n--- process output ---\n${out.slice(-6_000)}`, { cause: err });
  }
  return { child, urls, output: () => out, stop };
}

/** The end of a run in a scratch directory: stops `proc` (SIGTERM, a user's Ctrl-C) and removes `dir`. */
export async function stopAndRemove(proc: RunningProcess | undefined, dir: string | undefined): Promise<void> {
  await proc?.stop('SIGTERM');
  if (dir) await rm(dir, { recursive: true, force: true });
}

/**
 * The 6-digit code of the last mail to `email` that a process on the console mailer (`npm start` without SMTP_URL)
 * printed after output offset `since`: what the person at that terminal reads.
 */
export function codeMailedTo(proc: RunningProcess, email: string, since = 0): Promise<string> {
  return waitFor(
    () => {
      const out = proc.output().slice(since);
      const at = out.lastIndexOf(`Mail to ${email}: `);
      return Promise.resolve(at >= 0 && /^Your code: (\d{6})$/m.exec(out.slice(at))?.[1]);
    },
    { timeoutMs: 10_000, what: `a code mailed to ${email}` },
  );
}
