/** Loopback upstream servers with programmable handlers and a record of every request they saw. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serve } from './http.js';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type UpstreamHandler = (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>;

export interface Upstream {
  url: string;
  port: number;
  seen: SeenRequest[];
  /** Replace the handler (default: 200 `{"ok":true}`). */
  handle(handler: UpstreamHandler): void;
  close(): Promise<void>;
}

export async function startUpstream(handler?: UpstreamHandler): Promise<Upstream> {
  const seen: SeenRequest[] = [];
  let current: UpstreamHandler =
    handler ??
    ((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  const server = await serve((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body });
      Promise.resolve(current(req, res, body)).catch(() => res.destroy());
    });
  });
  return {
    url: server.url,
    port: server.port,
    seen,
    handle(h) {
      current = h;
    },
    close: () => server.close(),
  };
}
