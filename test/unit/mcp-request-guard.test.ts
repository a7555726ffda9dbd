// Origin validation and DNS-rebinding protection of /mcp (mcp/request-guard.ts), over real HTTP with a raw Host.
import { request } from 'node:http';
import Router from '@koa/router';
import { afterAll, describe, expect, it } from 'vitest';
import { createKoaApp } from '../../api/app.js';
import type { AppState } from '../../api/context.js';
import { loadConfig } from '../../core/config.js';
import { createLogger } from '../../core/logger.js';
import type { RunningHttpServer } from '../../platform/runtime/http-server.js';
import { requestGuard } from '../../mcp/request-guard.js';
import { serve } from '../helpers/http.js';

const servers: RunningHttpServer[] = [];

async function guarded(env: Record<string, string>): Promise<RunningHttpServer> {
  const config = loadConfig({ NODE_ENV: 'test', ...env });
  const router = new Router<AppState>();
  router.all('/mcp', requestGuard(config), (ctx) => {
    ctx.body = { passed: true };
  });
  const server = await serve(createKoaApp({ config, logger: createLogger({ level: 'silent' }) }, [router]).callback());
  servers.push(server);
  return server;
}

/** POST /mcp with exactly these headers (fetch would not let us set Host). */
function post(server: RunningHttpServer, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: '/mcp', method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

describe('the /mcp request guard', () => {
  it('accepts no Origin, its own origin and configured ones; refuses any other (403, envelope)', async () => {
    const server = await guarded({
      MCP_URL: 'http://localhost:3002',
      MCP_ALLOWED_ORIGINS: 'https://inspector.example',
    });
    const host = new URL(server.url).host;
    for (const origin of [
      undefined,
      'http://localhost:3002',
      'https://inspector.example',
      'HTTPS://Inspector.example',
    ]) {
      const res = await post(server, { host, ...(origin ? { origin } : {}) });
      expect(res.status, origin).toBe(200);
    }
    for (const origin of ['https://evil.example', 'http://localhost:3003', 'null']) {
      const res = await post(server, { host, origin });
      expect(res.status, origin).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'forbidden', details: { rule: 'origin' } });
    }
  });

  it('on loopback, accepts the loopback names on any port and refuses other Hosts', async () => {
    const server = await guarded({ MCP_URL: 'http://localhost:3002' }); // HOST defaults to 127.0.0.1
    for (const host of ['localhost:3002', '127.0.0.1:41234', 'localhost', '[::1]:8080']) {
      expect((await post(server, { host })).status, host).toBe(200);
    }
    for (const host of ['evil.example:3002', 'evil.example', '127.0.0.2.nip.io:3002']) {
      const res = await post(server, { host });
      expect(res.status, host).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'forbidden', details: { rule: 'host' } });
    }
  });

  it('elsewhere, accepts only the MCP URL host and configured hosts; * turns the check off', async () => {
    const server = await guarded({
      HOST: '0.0.0.0',
      MCP_URL: 'https://mcp.example.com',
      MCP_ALLOWED_HOSTS: 'mcp-internal,tools.example.com:8443',
    });
    const allowed = [
      'mcp.example.com',
      'mcp.example.com:443',
      'MCP.example.com',
      'mcp-internal:3002',
      'tools.example.com:8443',
    ];
    for (const host of allowed) expect((await post(server, { host })).status, host).toBe(200);
    for (const host of ['127.0.0.1:3002', 'localhost', 'mcp.example.com:8443', 'tools.example.com', 'evil.example']) {
      expect((await post(server, { host })).status, host).toBe(403);
    }
    const open = await guarded({ HOST: '0.0.0.0', MCP_URL: 'https://mcp.example.com', MCP_ALLOWED_HOSTS: '*' });
    expect((await post(open, { host: 'anything.example' })).status).toBe(200);
    expect((await post(open, { host: 'anything.example', origin: 'https://evil.example' })).status).toBe(403);
  });
});
