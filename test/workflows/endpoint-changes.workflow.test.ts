// A live listing's revision goes live through verifyAndPublishWorkflow (`publish_revision`: the smoke test of its new
// endpoint, then the apply), and an announced removal through endpointRemovalWorkflow (a timer to the sunset, then
// the endpoint leaves the listing). The histories recorded here are replayed by replay.workflow.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayHandler, type GatewayHandler } from '../../gateway/app.js';
import type { RunningHttpServer } from '../../platform/runtime/http-server.js';
import { workflowIds } from '../../core/temporal/contracts.js';
import { createPerson, type Person } from '../helpers/accounts.js';
import { createConsumer } from '../helpers/fixtures.js';
import { expectFailure, http, serve, describe as show } from '../helpers/http.js';
import { startFullStack, type FullStack } from '../helpers/full-stack.js';
import { recordHistory } from '../helpers/temporal.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

const NOTICE_MS = 2_000;

describe('revisions and endpoint removals', () => {
  let s: FullStack;
  let upstream: Upstream;
  let gateway: GatewayHandler;
  let gw: RunningHttpServer;
  let provider: Person;
  let consumer: Person;

  beforeAll(async () => {
    upstream = await startUpstream();
    s = await startFullStack({
      schedules: false,
      env: { UPSTREAM_ALLOW_PRIVATE: 'true', PRICE_INCREASE_NOTICE_DAYS: String(NOTICE_MS / 86_400_000) },
    });
    gateway = createGatewayHandler(s.services);
    gw = await serve(gateway);
    provider = await createPerson(s.services);
    consumer = await createConsumer(s.services, 0);
  });
  afterAll(async () => {
    await gw?.close();
    await gateway?.close();
    expect(await s?.services.ledger.findDrift()).toEqual([]);
    await s?.close();
    await upstream?.close();
  });

  const call = (method: string, p: string, body?: unknown) =>
    http(s.base, method, p, { token: provider.session, body });

  it('publishes a revision, then removes an endpoint at its sunset', async () => {
    const created = await call('POST', '/v1/provider/apis', {
      name: 'Revised',
      slug: 'revised',
      summary: 'A revised API',
      base_url: upstream.url,
      endpoints: [{ method: 'GET', path: '/a' }],
    });
    const apiId = created.body.data.api_id as string;
    const a = created.body.data.endpoints[0].endpoint_id as string;
    expect((await call('POST', `/v1/provider/apis/${apiId}/publish`, { accept_terms: true })).body.data.status).toBe(
      'live',
    );

    await call('POST', `/v1/provider/apis/${apiId}/endpoints`, { method: 'GET', path: '/b' });
    const published = await call('POST', `/v1/provider/apis/${apiId}/publish`, { accept_terms: true });
    expect(published.body.data, show(published)).toMatchObject({
      action: 'publish_revision',
      revision_published: true,
    });
    await recordHistory(s.temporal.address, workflowIds.publish(apiId), 'verify-and-publish-revision.json');

    // A called endpoint is removed after the notice.
    expect((await http(gw.url, 'GET', '/v1/proxy/revised/a', { token: consumer.apiKey })).status).toBe(200);
    await gateway.drain.flush();
    await call('DELETE', `/v1/provider/apis/${apiId}/endpoints/${a}`);
    await call('POST', `/v1/provider/apis/${apiId}/publish`, { accept_terms: true });
    const result = await s.temporal.client.workflow.getHandle(workflowIds.endpointRemoval(apiId, a)).result();
    expect(result).toEqual({ removed: true });
    expectFailure(
      await http(gw.url, 'GET', '/v1/proxy/revised/a', { token: consumer.apiKey }),
      410,
      'endpoint_removed',
    );
    await recordHistory(s.temporal.address, workflowIds.endpointRemoval(apiId, a), 'endpoint-removal-removed.json');
  });
});
