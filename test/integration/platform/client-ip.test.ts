// Issue 21 item 2: the client's address is the socket peer unless TRUST_PROXY_HOPS proxies of ours stand in front, and
// then only the rightmost (proxy-appended) X-Forwarded-For values count. A client cannot dodge a per-IP limit by
// sending a new X-Forwarded-For with every request.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { ConfigError, loadConfig } from '../../../core/config.js';
import { createMcpApp } from '../../../mcp/app.js';
import { http, serve } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

const LIMITS = { REGISTER_RATE_LIMIT_PER_HOUR: '20' };

async function withApi<T>(env: Record<string, string>, fn: (base: string, stack: TestStack) => Promise<T>): Promise<T> {
  const stack = await createTestStack({ env: { ...LIMITS, ...env } });
  const server = await serve(createApiApp(stack.services).callback());
  try {
    return await fn(server.url, stack);
  } finally {
    await server.close();
    await stack.close();
  }
}

/** 50 sequential POSTs, each with its own X-Forwarded-For; the statuses in order. */
async function fifty(base: string, path: string, forwardedFor: (i: number) => string) {
  const statuses: number[] = [];
  for (let i = 0; i < 50; i++) {
    statuses.push((await http(base, 'POST', path, { headers: { 'x-forwarded-for': forwardedFor(i) } })).status);
  }
  return statuses;
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

describe('client address and per-IP limits', () => {
  it('TRUST_PROXY_HOPS=0 (default): 50 registrations with 50 X-Forwarded-For values from one address hit the limit', async () => {
    await withApi({}, async (base, stack) => {
      expect(stack.config.trustProxyHops).toBe(0);
      const register = await fifty(base, '/v1/register', (i) => `203.0.113.${i + 1}`);
      expect(count(register, 201)).toBe(20);
      expect(count(register, 429)).toBe(30);
    });
  });

  it('TRUST_PROXY_HOPS=1: the rightmost (proxy-appended) address counts, never the client-chosen leftmost', async () => {
    await withApi({ TRUST_PROXY_HOPS: '1' }, async (base) => {
      // A client behind our one proxy sends a new leftmost value every time; the proxy appends the real address.
      const spoofed = await fifty(base, '/v1/register', (i) => `203.0.113.${i + 1}, 192.0.2.7`);
      expect(count(spoofed, 201)).toBe(20);
      expect(count(spoofed, 429)).toBe(30);
      // Distinct clients behind the proxy each get their own allowance.
      const others = await fifty(base, '/v1/register', (i) => `192.0.2.7, 198.51.100.${i + 1}`);
      expect(count(others, 201)).toBe(50);
    });
  });

  it('the agent-tool server (svc_register) and the OAuth provider use the same hop count', async () => {
    const stack = await createTestStack({ env: LIMITS });
    const mcp = createMcpApp(stack.services);
    const server = await serve(mcp.app.callback());
    let n = 0;
    try {
      expect(mcp.app.proxy).toBe(false);
      // Every HTTP request of the SDK client carries a new X-Forwarded-For.
      const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        fetch: (url, init) => {
          const headers = new Headers(init?.headers);
          headers.set('x-forwarded-for', `203.0.113.${++n % 250}`);
          return fetch(url, { ...init, headers });
        },
        requestInit: {
          headers: { Authorization: `Bearer ${(await stack.services.accounts.register({ ip: '10.9.9.9' })).api_key}` },
        },
      });
      const client = new Client({ name: 'xff', version: '1' });
      await client.connect(transport);
      const errors: string[] = [];
      for (let i = 0; i < 50; i++) {
        const result = await client.callTool({ name: 'svc_register', arguments: {} });
        if (result.isError) errors.push(JSON.stringify(result.structuredContent ?? result.content));
      }
      expect(errors).toHaveLength(30);
      expect(errors[0]).toContain('rate_limited');
      await client.close();
    } finally {
      await mcp.close();
      await server.close();
      await stack.close();
    }
    await withApi({ TRUST_PROXY_HOPS: '2' }, async (_base, s) => {
      const app = createApiApp(s.services);
      expect([app.proxy, app.maxIpsCount]).toEqual([true, 2]);
      const surface = createMcpApp(s.services);
      expect([surface.app.proxy, surface.app.maxIpsCount]).toEqual([true, 2]);
      await surface.close();
    });
  });

  it('refuses TRUST_PROXY=true at boot with a message naming TRUST_PROXY_HOPS', () => {
    let error: unknown;
    try {
      loadConfig({ TRUST_PROXY: 'true' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.join('\n')).toMatch(/TRUST_PROXY: replaced by TRUST_PROXY_HOPS/);
    expect(loadConfig({ TRUST_PROXY_HOPS: '1' }).trustProxyHops).toBe(1);
    expect(() => loadConfig({ TRUST_PROXY_HOPS: '-1' })).toThrow(/TRUST_PROXY_HOPS/);
  });
});
