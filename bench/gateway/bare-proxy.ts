// The bare Node proxy: the floor for any Node gateway. Same process model as the gateway (one process, node:http
// server, one undici Pool with keep-alive to the upstream) and nothing else: no auth, no metering, no logging.
// Run as a child: BARE_UPSTREAM=http://127.0.0.1:<port> node --import tsx bench/gateway/bare-proxy.ts
// It listens on an ephemeral loopback port and prints "listening <port>" once ready.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { proxyServer, serveUntilSignalled, upstreamPool } from './proxy-process.js';

const upstream = process.env.BARE_UPSTREAM;
if (!upstream) throw new Error('BARE_UPSTREAM is required');

const pool = upstreamPool(upstream);

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length > 0 ? Buffer.concat(chunks) : undefined;
}

async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readBody(req);
  const contentType = req.headers['content-type'];
  const upstreamRes = await pool.request({
    path: req.url ?? '/',
    method: req.method ?? 'GET',
    headers: contentType ? { 'content-type': contentType } : {},
    body,
  });
  // Buffered rather than piped: a metering gateway has to see the whole answer before it charges and replies,
  // and for ~100-byte bodies buffering is also the cheaper path.
  const payload = Buffer.from(await upstreamRes.body.arrayBuffer());
  const upstreamType = upstreamRes.headers['content-type'];
  res.writeHead(upstreamRes.statusCode, {
    'content-type': typeof upstreamType === 'string' ? upstreamType : 'application/octet-stream',
    'content-length': payload.length,
  });
  res.end(payload);
}

serveUntilSignalled(proxyServer(forward), () => pool.close());
