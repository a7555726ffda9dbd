// Graceful shutdown: in-flight requests finish with Connection: close; new connections are refused afterwards.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../core/logger.js';
import { startHttpServer } from '../../../platform/runtime/http-server.js';

function get(
  port: number,
  path: string,
  agent: http.Agent,
): Promise<{ status: number; connection?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    });
    req.on('error', reject);
  });
}

/** A server on a free loopback port, logging nothing, with `graceMs` to finish requests on close. */
const startTestServer = (graceMs: number, handler: Parameters<typeof startHttpServer>[0]['handler']) =>
  startHttpServer({
    name: 't',
    host: '127.0.0.1',
    port: 0,
    logger: createLogger({ level: 'silent' }),
    graceMs,
    handler,
  });

describe('startHttpServer graceful shutdown', () => {
  it('lets an in-flight request finish and closes its keep-alive socket', async () => {
    const server = await startTestServer(5_000, (req, res) => {
      const delay = req.url === '/slow' ? 400 : 0;
      setTimeout(() => res.end(`done ${req.url}`), delay);
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    expect((await get(server.port, '/warm', agent)).status).toBe(200); // an idle keep-alive socket now exists

    const inFlight = get(server.port, '/slow', agent);
    await new Promise((r) => setTimeout(r, 100));
    expect(server.inFlight).toBe(1);
    const closed = server.close();
    const res = await inFlight;
    expect(res).toEqual({ status: 200, connection: 'close', body: 'done /slow' });
    await closed;
    await expect(get(server.port, '/after', new http.Agent())).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    agent.destroy();
  });

  it('force-closes connections still open after the grace period', async () => {
    const server = await startTestServer(200, () => undefined); // never answers
    const hung = get(server.port, '/hang', new http.Agent());
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    await expect(hung).rejects.toThrow();
  });
});
