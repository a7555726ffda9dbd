// A provider host on a non-public address while the policy refuses it: the gateway answers 503 upstream_not_allowed
// (the marketplace's address policy, issue 31), without describing the network, and charges nothing.
import { describe, expect, it } from 'vitest';
import { expectReconciled } from '../../helpers/books.js';
import { createPaidApi } from '../../helpers/fixtures.js';
import { ORDERS_API, useGatewayStack } from '../../helpers/gateway-stack.js';
import { expectFailure, http } from '../../helpers/http.js';

describe('a blocked upstream', () => {
  // The address policy on (UPSTREAM_ALLOW_PRIVATE off); the test upstream's 127.0.0.1 stands for a public host.
  const g = useGatewayStack(
    {
      ...ORDERS_API,
      env: { ...ORDERS_API.env, UPSTREAM_ALLOW_PRIVATE: 'false' },
      upstream: { trustedAddresses: ['127.0.0.1'] },
    },
    expectReconciled,
  );

  it('a provider host on a non-public address: 503 upstream_not_allowed that does not describe the network', async () => {
    const c = await g.consumer(10);
    const hidden = await createPaidApi(g.stack.services, {
      provider: g.provider,
      baseUrl: 'http://10.255.255.1:9',
      endpoints: [{ method: 'GET', path: '/x', priceCents: 1 }],
    });
    const res = await http(g.server.url, 'GET', `/v1/proxy/${hidden.slug}/x`, { token: c.apiKey });
    expectFailure(res, 503, 'upstream_not_allowed');
    expect(res.body.error.details).toEqual({ reason: 'upstream_not_allowed' });
    expect(res.body.error.message).toMatch(/not reachable under this marketplace's address policy/);
    expect(res.text).not.toMatch(/non-public|private|10\.255|blocked/i);
    expect(await g.balance(c.orgId)).toBe(10);
    // The listing the policy admits is called as usual, by the same consumer.
    const fine = await http(g.server.url, 'GET', `/v1/proxy/${g.api.slug}/items/7`, { token: c.apiKey });
    expect(fine.status, fine.text).toBe(200);
    expect(await g.balance(c.orgId)).toBe(9);
  });
});
