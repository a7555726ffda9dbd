// A child key minted by a key (over the real routes) spends against its parent's budget at the gateway too.
import { describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { expectReconciled } from '../../helpers/books.js';
import { sql } from '../../helpers/db.js';
import { ORDERS_API, useGatewayStack } from '../../helpers/gateway-stack.js';
import { describe as show, expectFailure, http, serve } from '../../helpers/http.js';

describe("a child key's spend at the gateway", () => {
  const g = useGatewayStack(ORDERS_API, expectReconciled);

  it("a child key's spend counts against its parent's budget too (minted by the key, over the real routes)", async () => {
    const c = await g.consumer(100);
    const apiApp = await serve(createApiApp(g.stack.services).callback());
    try {
      const mint = (token: string, body: Record<string, unknown>) =>
        http(apiApp.url, 'POST', '/v1/keys', { token, body: { name: 'k', ...body } });
      const parent = await mint(c.session, { scopes: ['proxy:call', 'keys:write'], budget_cents: 12 });
      expect(parent.status, show(parent)).toBe(201);
      const child = await mint(parent.body.data.api_key as string, { scopes: ['proxy:call'] });
      expect(child.status, show(child)).toBe(201);
      const order = (token: string) =>
        http(g.server.url, 'POST', `/v1/proxy/${g.api.slug}/orders`, { token, body: {} });
      expect((await order(child.body.data.api_key as string)).status).toBe(200);
      expect((await order(parent.body.data.api_key as string)).status).toBe(200);
      // 10 of the parent's 12 are spent (5 by the child): neither may spend 5 more.
      const refused = await order(child.body.data.api_key as string);
      expectFailure(refused, 402, 'insufficient_budget');
      expect(refused.body.error.details).toMatchObject({ key_id: parent.body.data.id });
      expectFailure(await order(parent.body.data.api_key as string), 402, 'insufficient_budget');
      await g.gateway.drain.flush();
      const [row] = await sql(g.stack.db.url, 'select spent_cents from api_keys where id = $1', [parent.body.data.id]);
      expect(row).toEqual({ spent_cents: '10' });
    } finally {
      await apiApp.close();
    }
  });
});
