/**
 * A real Redis Cluster on loopback for tests: three masters (no replicas), each a `redis-server` process with
 * `--cluster-enabled yes` in a temp dir of its own, joined with `redis-cli --cluster create`, ready once every node
 * reports `cluster_state:ok`. No persistence; `stop` kills the three processes and removes their dirs.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, waitFor } from './ports.js';

const run = promisify(execFile);
const HOST = '127.0.0.1';

export interface RedisClusterHarness {
  nodes: { host: string; port: number }[];
  /** `host:port,…`: the value of REDIS_CLUSTER_NODES. */
  env: string;
  stop(): Promise<void>;
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', HOST, '-p', String(port), ...args], { timeout: 10_000 });
  return stdout;
}

export async function startRedisCluster(masters = 3): Promise<RedisClusterHarness> {
  const started: { child: ChildProcess; dir: string; port: number; exited: Promise<void> }[] = [];
  const stop = async () => {
    await Promise.all(
      started.map(async ({ child, dir, exited }) => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited;
        await rm(dir, { recursive: true, force: true });
      }),
    );
  };
  try {
    for (let i = 0; i < masters; i++) {
      // The cluster bus port is given explicitly: the default (port + 10000) may be outside our free-port band.
      const [port, busPort] = [await freePort(), await freePort()];
      const dir = await mkdtemp(path.join(tmpdir(), 'redis-cluster-'));
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          HOST,
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(busPort),
          '--cluster-config-file',
          path.join(dir, 'nodes.conf'),
          '--cluster-node-timeout',
          '5000',
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--daemonize',
          'no',
        ],
        { stdio: 'ignore' },
      );
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      started.push({ child, dir, port, exited });
    }
    for (const { port } of started) {
      await waitFor(async () => (await cli(port, 'ping')).trim() === 'PONG', { what: `redis-server on ${port}` });
    }
    const addresses = started.map(({ port }) => `${HOST}:${port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], {
      timeout: 30_000,
    });
    for (const { port } of started) {
      await waitFor(async () => (await cli(port, 'cluster', 'info')).includes('cluster_state:ok'), {
        timeoutMs: 20_000,
        what: `cluster_state:ok on ${port}`,
      });
    }
    // Every node must know every slot's owner before clients ask it (redis-cli waits for the config to converge,
    // but a node may still be learning its peers' addresses).
    for (const { port } of started) {
      await waitFor(
        async () =>
          (await cli(port, 'cluster', 'nodes')).split('\n').filter((l) => l.includes('master')).length === masters,
        { timeoutMs: 20_000, what: `node ${port} to know every master` },
      );
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    nodes: started.map(({ port }) => ({ host: HOST, port })),
    env: started.map(({ port }) => `${HOST}:${port}`).join(','),
    stop,
  };
}
