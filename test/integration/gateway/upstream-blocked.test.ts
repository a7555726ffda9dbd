// A provider host on a non-public address: the gateway answers 502 upstream_error without describing the network
// and charges nothing.
import { describe, expect, it } from 'vitest';
import { expectReconciled } from '../../helpers/books.js';
import { createPaidApi } from '../../helpers/fixtures.js';
import { ORDERS_API, useGatewayStack } from '../../helpers/gateway-stack.js';
import { expectFailure, http } from '../../helpers/http.js';

describe('a blocked upstream', () => {
  const g = useGatewayStack(ORDERS_API, expectReconciled);

  it('a provider host on a non-public address: 502 upstream_error that does not describe the network', async () => {
    const c = await g.consumer(10);
    const hidden = await createPaidApi(g.stack.services, {
      provider: g.provider,
      baseUrl: 'http://10.255.255.1:9',
      endpoints: [{ method: 'GET', path: '/x', priceCents: 1 }],
    });
    const res = await http(g.server.url, 'GET', `/v1/proxy/${hidden.slug}/x`, { token: c.apiKey });
    expectFailure(res, 502, 'upstream_error');
    expect(res.text).not.toMatch(/non-public|private|10\.255|blocked/i);
    expect(await g.balance(c.orgId)).toBe(10);
  });
});
