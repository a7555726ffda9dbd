/**
 * A server process the crash tests SIGKILL and start again (durable-redis.ts, scratch-postgres.ts): it runs in a
 * process group of its own, its output is kept across runs, and a start waits until `ready()` says so, failing at
 * once if the process exits first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { waitFor } from './ports.js';

export interface CrashableServer {
  port: number;
  url: string;
  dir: string;
  /** The running server's pid (undefined while killed). */
  pid(): number | undefined;
  /** SIGKILL the server's process group and wait until it has exited. */
  kill(): Promise<void>;
  /** Start it again on the same port and directory and wait until it is ready. */
  restart(): Promise<void>;
  /** Stop it (if running) and remove its files. */
  stop(): Promise<void>;
  /** What the server printed (all its runs). */
  output(): string;
}

export interface CrashableSpec {
  /** For messages: `redis-server`, `postgres`. */
  what: string;
  command: string;
  args: readonly string[];
  /** Run as this user (spawn's uid/gid). */
  user?: { uid: number; gid: number };
  ready: () => Promise<boolean>;
  readyTimeoutMs: number;
  readyIntervalMs?: number;
  /** After the process has exited from a kill, before it counts as gone. */
  afterKill?: (child: ChildProcess) => Promise<void>;
  port: number;
  url: string;
  dir: string;
  /** What `stop()` removes (default: `dir`). */
  root?: string;
}

/** Starts the server (once ready) and returns its handle. */
export async function startCrashable(spec: CrashableSpec): Promise<CrashableServer> {
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let out = '';

  const launch = async () => {
    const c = spawn(spec.command, spec.args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], ...spec.user });
    c.stdout.on('data', (b: Buffer) => (out += b.toString()));
    c.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child = c;
    exited = new Promise((resolve) => c.once('exit', () => resolve()));
    const early = exited.then(() => Promise.reject(new Error(`${spec.what} exited early:\n${out.slice(-3_000)}`)));
    early.catch(() => undefined);
    await Promise.race([
      early,
      waitFor(spec.ready, {
        timeoutMs: spec.readyTimeoutMs,
        intervalMs: spec.readyIntervalMs,
        what: `${spec.what} on ${spec.port}`,
      }),
    ]);
  };

  const kill = async () => {
    const c = child;
    if (!c) return;
    if (c.exitCode === null && c.signalCode === null) {
      try {
        process.kill(-c.pid!, 'SIGKILL'); // the group: the server's own children too
      } catch {
        c.kill('SIGKILL');
      }
      await exited;
    }
    await spec.afterKill?.(c);
    child = undefined;
  };

  await launch();
  return {
    port: spec.port,
    url: spec.url,
    dir: spec.dir,
    pid: () => child?.pid,
    kill,
    async restart() {
      await kill();
      await launch();
    },
    async stop() {
      await kill();
      rmSync(spec.root ?? spec.dir, { recursive: true, force: true });
    },
    output: () => out,
  };
}
