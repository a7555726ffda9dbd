/**
 * A dedicated redis-server for crash tests: AOF on (`appendfsync everysec`, no RDB snapshots) in a fresh directory, so
 * `kill()` (SIGKILL, like a machine losing the process) followed by `restart()` (same port, same directory) replays the
 * append-only file exactly as a production restart would, losing at most the last second of writes.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startCrashable, type CrashableServer } from './crashable.js';
import { freePort } from './ports.js';

export type DurableRedis = CrashableServer;

/** `extraArgs` are appended to the command line (a later setting overrides an earlier one, e.g. `--appendfsync`). */
export async function startDurableRedis(extraArgs: readonly string[] = []): Promise<DurableRedis> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  return startCrashable({
    what: 'redis-server',
    command: 'redis-server',
    args: [
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
    ready: () => ping(url),
    readyTimeoutMs: 15_000,
    port,
    url,
    dir,
  });
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
