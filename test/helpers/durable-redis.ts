/**
 * A dedicated redis-server for crash tests: AOF on (`appendfsync everysec`, no RDB snapshots) in a fresh directory, so
 * `kill()` (SIGKILL, like a machine losing the process) followed by `restart()` (same port, same directory) replays the
 * append-only file exactly as a production restart would, losing at most the last second of writes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort, waitFor } from './ports.js';

export interface DurableRedis {
  port: number;
  url: string;
  dir: string;
  /** The running server's pid (undefined while killed). */
  pid(): number | undefined;
  /** SIGKILL the server and wait until it has exited. */
  kill(): Promise<void>;
  /** Start it again on the same port and directory (the AOF is replayed) and wait until it answers PING. */
  restart(): Promise<void>;
  /** Stop it (if running) and remove its directory. */
  stop(): Promise<void>;
  /** What the server printed (all its runs). */
  output(): string;
}

/** `extraArgs` are appended to the command line (a later setting overrides an earlier one, e.g. `--appendfsync`). */
export async function startDurableRedis(extraArgs: readonly string[] = []): Promise<DurableRedis> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let out = '';

  const launch = async () => {
    const c = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--appendonly',
        'yes',
        '--appendfsync',
        'everysec',
        '--save',
        '',
        '--dir',
        dir,
        ...extraArgs,
      ],
      { detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    c.stdout.on('data', (b: Buffer) => (out += b.toString()));
    c.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child = c;
    exited = new Promise((resolve) => c.once('exit', () => resolve()));
    const early = exited.then(() => Promise.reject(new Error(`redis-server exited early:\n${out.slice(-2_000)}`)));
    early.catch(() => undefined);
    await Promise.race([early, waitFor(() => ping(url), { timeoutMs: 15_000, what: `redis-server on ${port}` })]);
  };

  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    try {
      process.kill(-c.pid!, 'SIGKILL'); // the group: an AOF rewrite child too
    } catch {
      c.kill('SIGKILL');
    }
    await exited;
    child = undefined;
  };

  await launch();
  return {
    port,
    url,
    dir,
    pid: () => child?.pid,
    kill,
    async restart() {
      await kill();
      await launch();
    },
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
    output: () => out,
  };
}

async function ping(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    // While the AOF is loading the server answers -LOADING; only PONG means ready.
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}
