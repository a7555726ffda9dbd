// Issue 21 item 7: /health tells anyone only up or down per component. A raw driver error (host, port, user name) goes
// to the log and the component's state to the metrics port, never into the public body.
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { createMcpApp, type McpSurface } from '../../../mcp/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createTestDatabase } from '../../helpers/db.js';
import { expectFailure, http, serve } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

/** A loopback TCP forwarder to Postgres that can be shut, connections and all: the database becomes unreachable. */
async function forwarder(target: URL): Promise<{ port: number; shut(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    shut: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

describe('public /health with Postgres unreachable', () => {
  let stack: TestStack;
  let dbPort: number;
  let dbUser: string;
  const servers: RunningHttpServer[] = [];
  let mcp: McpSurface;
  let gateway: GatewayHandler;

  beforeAll(async () => {
    const db = await createTestDatabase();
    const real = new URL(db.url);
    const link = await forwarder(real);
    const viaLink = new URL(db.url);
    viaLink.hostname = '127.0.0.1';
    viaLink.port = String(link.port);
    stack = await createTestStack({ db, env: { DATABASE_URL: viaLink.href } });
    dbPort = link.port;
    dbUser = decodeURIComponent(real.username);
    await link.shut(); // the process now points at a closed port
    gateway = createGatewayHandler(stack.services);
    mcp = createMcpApp(stack.services, { gateway });
    servers.push(await serve(createApiApp(stack.services).callback()));
    servers.push(await serve(mcp.app.callback()));
    servers.push(await serve(gateway));
  });
  afterAll(async () => {
    await mcp?.close();
    for (const s of servers) await s.close();
    await gateway?.close();
    await stack?.close();
  });

  it('answers 503 with up/down per component and no host, port or user text, on every surface', async () => {
    for (const [i, surface] of ['api', 'mcp', 'gateway'].entries()) {
      const res = await http(servers[i]!.url, 'GET', '/health');
      expectFailure(res, 503, 'internal_error');
      expect(res.body.error.details.checks, surface).toEqual({
        db: { status: 'down' },
        counters: { status: 'up' },
        temporal: { status: 'down' },
      });
      for (const leak of ['127.0.0.1', String(dbPort), dbUser, 'ECONNREFUSED', 'postgres', 'redis', 'temporal:']) {
        expect(res.text, `${surface} leaks ${leak}`).not.toContain(leak);
      }
    }
  });

  it('logs the error and exposes the state on the metrics registry', async () => {
    await http(servers[0]!.url, 'GET', '/health');
    expect(stack.logs.text()).toMatch(
      new RegExp(`health: component down.*ECONNREFUSED.*${dbPort}|ECONNREFUSED.*${dbPort}.*health: component down`),
    );
    const metrics = await stack.services.metrics.exposition();
    expect(metrics).toMatch(/health_component_up\{component="db",backend="postgres"\} 0/);
    expect(metrics).toMatch(/health_component_up\{component="counters",backend="redis"\} 1/);
  });
});
