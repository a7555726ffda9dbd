// Connect onboarding as a URL elicitation, in both MCP eras: provider_connect_onboard asks the client to show Stripe's
// onboarding page; the test acts as the person (Stripe's account.updated reaches the onboarding workflow, which records
// the account enabled) and the original call answers `status: "enabled"`. Needs the worker, so a full stack.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerson } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { startFullStack, type FullStack } from '../../helpers/full-stack.js';
import { connectV2, ERAS, type Data } from '../../helpers/mcp-eras.js';
import { serveMcp, type ServedMcp } from '../../helpers/mcp-served.js';
import { startStripeMock, type StripeMock } from '../../helpers/stripe-mock.js';

describe('Connect onboarding as a URL elicitation', () => {
  let s: FullStack;
  let stripe: StripeMock;
  let served: ServedMcp;

  beforeAll(async () => {
    stripe = await startStripeMock();
    s = await startFullStack({ env: { STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_API_BASE: stripe.url } });
    served = await serveMcp(s.services);
  });
  afterAll(async () => {
    await served?.close();
    await s?.close();
    await stripe?.stop();
  });

  /** What Stripe tells us once the person has finished its pages: the account can take charges and pay out. */
  async function finishOnboarding(orgId: string): Promise<void> {
    const [org] = await sql<{ stripe_account_id: string }>(
      s.db.url,
      'select stripe_account_id from orgs where id = $1',
      [orgId],
    );
    const update = { charges_enabled: true, payouts_enabled: true, details_submitted: true };
    expect(await s.services.connect.accountUpdated(org!.stripe_account_id, update)).toBe(true);
  }

  for (const era of ERAS) {
    it(`${era}: the person finishes Stripe's pages; the tool answers once the account is enabled`, async () => {
      const provider = await createPerson(s.services);
      const asked: Array<{ mode: string; url: string }> = [];
      const client = await connectV2(served.server.url, era, provider.apiKey, {
        name: 'connect-elicitation-test',
        capabilities: { elicitation: { url: {} } },
        setup(c) {
          c.setRequestHandler('elicitation/create', async (request) => {
            asked.push(request.params as { mode: string; url: string });
            await finishOnboarding(provider.orgId);
            return { action: 'accept' };
          });
        },
      });
      served.clients.push(client);
      const result = await client.callTool({ name: 'provider_connect_onboard', arguments: {} });
      expect(result.isError ?? false).toBe(false);
      const data = result.structuredContent as Data;
      expect(data).toMatchObject({ status: 'enabled', account_id: expect.stringMatching(/^acct_/) });
      expect(asked).toEqual([expect.objectContaining({ mode: 'url', url: data.url })]);
      const [org] = await sql(s.db.url, 'select connect_status from orgs where id = $1', [provider.orgId]);
      expect(org).toEqual({ connect_status: 'enabled' });
    });
  }
});
