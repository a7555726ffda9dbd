// Activating a required document reaches the gateway at once: the next call to its listing gets 428.
import { describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { expectReconciled } from '../../helpers/books.js';
import { createPaidApi } from '../../helpers/fixtures.js';
import { ORDERS_API, useGatewayStack } from '../../helpers/gateway-stack.js';
import { describe as show, http, serve } from '../../helpers/http.js';

describe('required terms at the gateway', () => {
  const g = useGatewayStack(ORDERS_API, expectReconciled);

  it('activating a required document reaches the gateway at once: the next call gets 428', async () => {
    const c = await g.consumer(10);
    const listing = await createPaidApi(g.stack.services, {
      baseUrl: `${g.upstream.url}/api/v2`,
      endpoints: [{ method: 'GET', path: '/items/{id}', priceCents: 0 }],
    });
    const get = () => http(g.server.url, 'GET', `/v1/proxy/${listing.slug}/items/1`, { token: c.apiKey });
    expect((await get()).status).toBe(200); // the listing is now cached by the gateway
    const apiApp = await serve(createApiApp(g.stack.services).callback());
    try {
      const doc = await http(apiApp.url, 'POST', '/v1/provider/documents', {
        token: listing.provider.session,
        body: { kind: 'terms', version: '1', body: '# Terms', api_id: listing.apiId, acceptance_mode: 'required' },
      });
      expect(doc.status, show(doc)).toBe(201);
      const activated = await http(apiApp.url, 'POST', `/v1/provider/documents/${doc.body.data.document_id}/activate`, {
        token: listing.provider.session,
      });
      expect(activated.status, show(activated)).toBe(200);
    } finally {
      await apiApp.close();
    }
    const started = Date.now();
    await expect.poll(async () => (await get()).status, { timeout: 1_000, interval: 50 }).toBe(428);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
