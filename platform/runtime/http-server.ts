/**
 * An HTTP server with graceful shutdown. On close(): stop accepting, let in-flight requests finish, answer them
 * with `Connection: close` so clients do not reuse the socket for new requests (they otherwise would; see STACK.md),
 * close idle keep-alive sockets at once, and force-close whatever is left after the grace period.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../core/logger.js';

export interface HttpServerOptions {
  name: string;
  host: string;
  port: number;
  /** A node request listener; a returned promise is the handler's business (Koa's callback settles its own). */
  handler: (req: IncomingMessage, res: ServerResponse) => unknown;
  logger: Logger;
  /** How long in-flight requests may take to finish once shutdown starts. */
  graceMs?: number;
  keepAliveTimeoutMs?: number;
}

export interface RunningHttpServer {
  name: string;
  server: http.Server;
  port: number;
  url: string;
  readonly inFlight: number;
  close(): Promise<void>;
}

export async function startHttpServer(opts: HttpServerOptions): Promise<RunningHttpServer> {
  const inFlight = new Set<ServerResponse>();
  let shuttingDown = false;

  const server = http.createServer((req, res) => {
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
    if (shuttingDown) res.shouldKeepAlive = false;
    opts.handler(req, res);
  });
  server.keepAliveTimeout = opts.keepAliveTimeoutMs ?? 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 120_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const displayHost = opts.host === '0.0.0.0' || opts.host === '::' ? 'localhost' : opts.host;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= new Promise<void>((resolve) => {
      shuttingDown = true;
      for (const res of inFlight) {
        if (!res.headersSent) res.shouldKeepAlive = false;
        else res.once('finish', () => res.socket?.end());
      }
      const force = setTimeout(() => {
        opts.logger.warn({ server: opts.name, inFlight: inFlight.size }, 'grace period over; closing connections');
        server.closeAllConnections();
      }, opts.graceMs ?? 10_000);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    }));

  return {
    name: opts.name,
    server,
    port,
    url: `http://${displayHost}:${port}`,
    get inFlight() {
      return inFlight.size;
    },
    close,
  };
}
