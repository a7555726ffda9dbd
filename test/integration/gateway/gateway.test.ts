// The gateway's first checks, in DESIGN.md's order: bearer (401), key (401), scope (403), listing (404).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Org } from '../../../db/entities/index.js';
import { newId } from '../../../core/ids.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createGatewayHandler, type GatewayHandler } from '../../../gateway/app.js';
import { expectFailure, http, serve } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

describe('gateway', () => {
  let stack: TestStack;
  let server: RunningHttpServer;
  let gateway: GatewayHandler;
  let consumerKey: string;
  let catalogOnlyKey: string;

  beforeAll(async () => {
    stack = await createTestStack();
    gateway = createGatewayHandler(stack.services);
    server = await serve(gateway);
    consumerKey = (await stack.services.accounts.register({ ip: '10.0.0.1' })).api_key;
    const em = stack.services.orm.em.fork();
    const org = em.create(Org, { id: newId('org') });
    catalogOnlyKey = stack.services.keys.create(em, {
      orgId: org.id,
      name: 'ro',
      scopes: ['catalog:read'],
      source: 'api',
    }).plaintext;
    await em.flush();
  });
  afterAll(async () => {
    expect(await stack.services.ledger.findDrift()).toEqual([]);
    await server.close();
    await gateway.close();
    await stack.close();
  });

  it('401 without a bearer, with a malformed one, and with an unknown key', async () => {
    expectFailure(await http(server.url, 'GET', '/v1/proxy/weather/today'), 401, 'unauthenticated');
    expectFailure(await http(server.url, 'GET', '/v1/proxy/weather/today', { token: 'nope' }), 401, 'unauthenticated');
    expectFailure(
      await http(server.url, 'GET', '/v1/proxy/weather/today', { token: `svc_live_${'Q'.repeat(24)}` }),
      401,
      'unauthenticated',
    );
  });

  it('401 for a session token: the gateway takes API keys only', async () => {
    const res = await http(server.url, 'GET', '/v1/proxy/weather/today', { token: `sess_${'a'.repeat(40)}` });
    expectFailure(res, 401, 'unauthenticated');
    expect(res.body.error.message).toMatch(/session tokens are refused/);
  });

  it('403 forbidden for a key without proxy:call, naming the scope', async () => {
    const res = await http(server.url, 'POST', '/v1/proxy/weather/today', { token: catalogOnlyKey, body: { q: 1 } });
    expectFailure(res, 403, 'forbidden');
    expect(res.body.error.details).toEqual({ missing_scope: 'proxy:call' });
  });

  it('404 not_found for an unknown slug (for every method)', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await http(server.url, method, '/v1/proxy/no-such-api/v1/items?x=1', { token: consumerKey });
      expectFailure(res, 404, 'not_found');
    }
  });

  it('404 envelope for paths outside /v1/proxy and 405 for POST /health', async () => {
    expectFailure(await http(server.url, 'GET', '/v1/apis'), 404, 'not_found');
    const res = await http(server.url, 'POST', '/health');
    expectFailure(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('serves /health with the three components', async () => {
    const res = await http(server.url, 'GET', '/health');
    expect(res.status).toBe(503); // no Temporal in this file
    expect(Object.keys(res.body.error.details.checks).sort()).toEqual(['counters', 'db', 'temporal']);
    expect(res.body.error.details.service).toBe('gateway');
  });
});
