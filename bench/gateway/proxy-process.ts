// What the benchmark's child proxies (bare-proxy.ts, floor-proxy.ts) share around their `forward`: the upstream pool,
// a node:http server that answers 502 when forwarding fails, the "listening <port>" line once ready, and a clean exit
// on SIGTERM or SIGINT.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Pool } from 'undici';
import { processStalls } from '../../core/stall-monitor.js';

/** More connections than wrk's 32 so the pool never queues; keep-alive well past a round's length. */
export const upstreamPool = (upstream: string): Pool =>
  new Pool(upstream, { connections: 64, pipelining: 1, keepAliveTimeout: 60_000 });

/** The path a benchmark proxy answers itself: its event-loop stalls so far (the gateway bench's stall probe). */
export const STALLS_PATH = '/__bench/stalls';

export function proxyServer(forward: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Server {
  processStalls.start();
  const server = createServer((req, res) => {
    if (req.url === STALLS_PATH) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          stalls: processStalls.count,
          long_gcs: processStalls.gcPauses,
          longest_ms: processStalls.longest,
        }),
      );
      return;
    }
    forward(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'bad_gateway', message: String(err) }));
    });
  });
  server.keepAliveTimeout = 75_000;
  return server;
}

/** Listen on an ephemeral loopback port and print it; on SIGTERM or SIGINT close, `release` the clients and exit. */
export function serveUntilSignalled(server: Server, release: () => Promise<unknown>): void {
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (typeof address === 'object' && address) console.log(`listening ${address.port}`);
  });
  const shutdown = (): void => {
    server.close();
    server.closeAllConnections();
    void release().finally(() => process.exit(0));
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
