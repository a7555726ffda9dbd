/**
 * Toxiproxy (built into .tools/bin by scripts/ensure-tools.sh) for the fault matrix: a TCP proxy per link (gateway →
 * Redis, gateway → Postgres, …) whose faults are switched on and off over its HTTP API. `link.fault(kind)` adds the
 * named fault; `link.heal()` removes every toxic and re-enables the link. The faults (docs/reliability.md):
 *
 * - `latency`: every byte waits `latencyMs` (± jitter) in both directions: p99 past the callers' timeouts.
 * - `reset`: connections are reset by the peer (TCP RST) shortly after data flows: a reset mid-response.
 * - `blackhole`: data is swallowed and the connection never closes (a timeout).
 * - `bandwidth`: a few KB/s in both directions.
 * - `partition`: the link is down (new connections refused, open ones closed) until healed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './env.js';
import { freePort, waitFor } from './ports.js';

export const TOXIPROXY_SERVER = path.join(ROOT, '.tools', 'bin', 'toxiproxy-server');

export const FAULT_KINDS = ['latency', 'reset', 'blackhole', 'bandwidth', 'partition'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultOptions {
  /** `latency`: added delay per direction (default 1,500 ms, past the gateway's Redis and upstream timeouts). */
  latencyMs?: number;
  /** `bandwidth`: KB/s per direction (default 2). */
  rateKBps?: number;
  /** `reset`: ms after data starts flowing before the reset (default 0: at once). */
  resetAfterMs?: number;
}

export interface Link {
  name: string;
  /** Where clients connect (`127.0.0.1:port`). */
  listen: string;
  port: number;
  /** What the link forwards to. */
  upstream: string;
  fault(kind: FaultKind, options?: FaultOptions): Promise<void>;
  heal(): Promise<void>;
}

export interface Toxiproxy {
  url: string;
  link(name: string, upstream: string): Promise<Link>;
  /** Remove every toxic and re-enable every link. */
  resetAll(): Promise<void>;
  stop(): Promise<void>;
  output(): string;
}

async function api(base: string, method: string, route: string, body?: unknown): Promise<unknown> {
  const res = await fetch(base + route, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`toxiproxy ${method} ${route}: ${res.status} ${text}`);
  return text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
}

function toxics(kind: Exclude<FaultKind, 'partition'>, o: FaultOptions): Array<Record<string, unknown>> {
  const both = (type: string, attributes: Record<string, number>) =>
    (['upstream', 'downstream'] as const).map((stream) => ({ name: `${type}_${stream}`, type, stream, attributes }));
  switch (kind) {
    case 'latency':
      return both('latency', { latency: o.latencyMs ?? 1_500, jitter: Math.round((o.latencyMs ?? 1_500) / 10) });
    case 'reset':
      return [
        { name: 'reset', type: 'reset_peer', stream: 'downstream', attributes: { timeout: o.resetAfterMs ?? 0 } },
      ];
    case 'blackhole':
      return [{ name: 'blackhole', type: 'timeout', stream: 'downstream', attributes: { timeout: 0 } }];
    case 'bandwidth':
      return both('bandwidth', { rate: o.rateKBps ?? 2 });
  }
}

export async function startToxiproxy(): Promise<Toxiproxy> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let out = '';
  const child: ChildProcess = spawn(TOXIPROXY_SERVER, ['-host', '127.0.0.1', '-port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-20_000)));
  child.stderr!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`toxiproxy-server exited:\n${out}`);
      return api(url, 'GET', '/version').then(
        () => true,
        () => false,
      );
    },
    { timeoutMs: 15_000, what: 'toxiproxy-server' },
  );

  const links: Link[] = [];
  return {
    url,
    async link(name, upstream) {
      const listenPort = await freePort();
      const listen = `127.0.0.1:${listenPort}`;
      await api(url, 'POST', '/proxies', { name, listen, upstream, enabled: true });
      const link: Link = {
        name,
        listen,
        port: listenPort,
        upstream,
        async fault(kind, options = {}) {
          if (kind === 'partition') {
            await api(url, 'POST', `/proxies/${name}`, { enabled: false });
            return;
          }
          for (const toxic of toxics(kind, options)) await api(url, 'POST', `/proxies/${name}/toxics`, toxic);
        },
        async heal() {
          const current = (await api(url, 'GET', `/proxies/${name}/toxics`)) as Array<{ name: string }>;
          for (const t of current) await api(url, 'DELETE', `/proxies/${name}/toxics/${t.name}`);
          await api(url, 'POST', `/proxies/${name}`, { enabled: true });
        },
      };
      links.push(link);
      return link;
    },
    async resetAll() {
      await api(url, 'POST', '/reset');
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
    output: () => out,
  };
}
