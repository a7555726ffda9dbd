// The steps a person takes, as URL-mode elicitations (issue 25, item 2), in both MCP revisions, driven by the SDK's v2
// client over the real HTTP server: 2025-11-25 (the server sends elicitation/create and, once the person finished,
// notifications/elicitation/complete) and 2026-07-28 (input_required with the URL and a sealed requestState; the
// client's retry carries the answer). In the client's elicitation handler the test acts as the person: it approves
// spend for an approval-mode key, accepts required terms, or pays a checkout (the signed stripe-mock webhook). The
// original call then completes and money moves once; a retry with the same idempotency key spends nothing more. A
// client without the capability, or a person who declines, gets today's result: the URL and the next step.
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerson, type Person } from '../../helpers/accounts.js';
import { sql } from '../../helpers/db.js';
import { startFullStack, type FullStack } from '../../helpers/full-stack.js';
import { http } from '../../helpers/http.js';
import type { LiveApi } from '../../helpers/listings.js';
import { signStripeEvent, startStripeMock, type StripeMock } from '../../helpers/stripe-mock.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { connectV2, creditOf as settledCredit, ERAS, LEGACY, modernPost, type Era } from '../../helpers/mcp-eras.js';
import { serveMcp, type ServedMcp } from '../../helpers/mcp-served.js';
import { closeAll, createConsumer, createPaidApi } from '../../helpers/fixtures.js';

type Data = Record<string, any>;
const WEBHOOK_SECRET = 'whsec_test_elicitation';
const TERMS = '# Terms\n\nBe nice to the API.\n';

interface Elicited {
  mode?: string;
  url?: string;
  message?: string;
  elicitationId?: string;
}
/** The person: acts on the page the URL names, then answers the elicitation. */
type PersonAct = (request: Elicited) => Promise<'accept' | 'decline' | 'cancel'>;

describe('agent-tool server: the steps a person takes as URL elicitations', () => {
  let mock: StripeMock;
  let s: FullStack;
  let served: ServedMcp;
  let upstream: Upstream;
  let provider: Person;
  let paid: LiveApi;
  let events = 0;

  beforeAll(async () => {
    mock = await startStripeMock();
    upstream = await startUpstream();
    upstream.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    s = await startFullStack({
      env: {
        STRIPE_SECRET_KEY: 'sk_test_123',
        STRIPE_API_BASE: mock.url,
        STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        UPSTREAM_ALLOW_PRIVATE: 'true',
        MCP_PERSON_WAIT_MS: '8000',
      },
    });
    served = await serveMcp(s.services);
    ({ provider, ...paid } = await createPaidApi(s.services, {
      baseUrl: upstream.url,
      endpoints: [{ method: 'GET', path: '/paid', priceCents: 5 }],
    }));
  });
  afterAll(async () => {
    await served?.close();
    await s?.services.earnings.foldAll();
    expect(await s?.services.ledger.findDrift()).toEqual([]);
    await closeAll(s, upstream);
    await mock?.stop();
  });

  /** A v2 client; with `person`, it declares URL elicitation and answers it by acting as the person. */
  async function connect(
    era: Era,
    token: string,
    person?: PersonAct,
  ): Promise<{ client: Client; asked: Elicited[]; completed: string[] }> {
    const asked: Elicited[] = [];
    const completed: string[] = [];
    const client = await connectV2(served.server.url, era, token, {
      name: 'elicitation-test',
      ...(person ? { capabilities: { elicitation: { url: {} } } } : {}),
      setup(c) {
        if (!person) return;
        c.setRequestHandler('elicitation/create', async (request) => {
          const params = request.params as Elicited;
          asked.push(params);
          return { action: await person(params) };
        });
        c.setNotificationHandler('notifications/elicitation/complete', (n) => {
          completed.push((n.params as { elicitationId: string }).elicitationId);
        });
      },
    });
    served.clients.push(client);
    return { client, asked, completed };
  }

  async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Data> {
    const result = await client.callTool({ name, arguments: args });
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
    expect(JSON.parse(text.slice(text.indexOf('{')))).toEqual(result.structuredContent);
    return { isError: result.isError ?? false, ...(result.structuredContent as Data) };
  }

  const creditOf = (orgId: string) => settledCredit(s, orgId);

  /** An owner whose key waits for a person's approval of spend, with credits. */
  async function approvalModeOwner(): Promise<Person> {
    const owner = await createPerson(s.services);
    await s.services.ledger.post({ orgId: owner.orgId, kind: 'grant', amountCents: 1_000 });
    const patched = await http(s.base, 'PATCH', `/v1/keys/${owner.keyId}`, {
      token: owner.session,
      body: { approval_mode: true },
    });
    expect(patched.status).toBe(200);
    return owner;
  }

  const approve = (owner: Person, cents: number) =>
    http(s.base, 'POST', `/v1/keys/${owner.keyId}/approvals`, { token: owner.session, body: { amount_cents: cents } });

  for (const era of ERAS) {
    describe(era, () => {
      it('approval-mode spend: the person approves at the URL; the call completes and spends once', async () => {
        const owner = await approvalModeOwner();
        const { client, asked, completed } = await connect(era, owner.apiKey, async (request) => {
          expect((await approve(owner, 100)).status).toBe(200);
          return request.url ? 'accept' : 'cancel';
        });
        const args = { slug: paid.slug, endpoint: '/paid', idempotency_key: `approve-${era}` };
        const result = await call(client, 'call_api', args);
        expect(result).toMatchObject({ isError: false, status: 200, body: { ok: true } });
        expect(asked).toEqual([
          expect.objectContaining({ mode: 'url', url: `${s.config.urls.publicBase}/approve/${owner.keyId}` }),
        ]);
        if (era === LEGACY) expect(completed).toEqual([asked[0]!.elicitationId]);
        expect(await creditOf(owner.orgId)).toBe(995);
        // The agent retries the same call: replayed, nothing spent again, nobody asked again.
        expect(await call(client, 'call_api', args)).toMatchObject({ isError: false, status: 200 });
        expect(asked).toHaveLength(1);
        expect(await creditOf(owner.orgId)).toBe(995);
      });

      it('the person approves only after answering: the tool waits for it (2026-07-28: in later rounds)', async () => {
        const owner = await approvalModeOwner();
        let approved: Promise<unknown> | undefined;
        const { client, completed } = await connect(era, owner.apiKey, () => {
          // Accepted at once; the approval lands 2.5 s later (MCP_PERSON_WAIT_MS 8 s: a 2026-07-28 round waits 2 s).
          approved = new Promise((resolve) => setTimeout(resolve, 2_500)).then(() => approve(owner, 50));
          return Promise.resolve('accept');
        });
        const result = await call(client, 'call_api', { slug: paid.slug, endpoint: '/paid' });
        expect(result).toMatchObject({ isError: false, status: 200 });
        expect((await approved) as { status: number }).toMatchObject({ status: 200 });
        expect(completed).toHaveLength(era === LEGACY ? 1 : 0);
        expect(await creditOf(owner.orgId)).toBe(995);
      });

      it('required terms: the person accepts them at the URL; the call completes and spends once', async () => {
        const { termsApi, consumer, client, asked } = await acceptingTerms(era);
        const result = await call(client, 'call_api', { slug: termsApi.slug, endpoint: '/paid' });
        expect(result).toMatchObject({ isError: false, status: 200 });
        expect(asked).toEqual([expect.objectContaining({ mode: 'url', url: expect.stringMatching(/\/terms\//) })]);
        expect(await creditOf(consumer.orgId)).toBe(495);
      });

      it("an installed API tool's required terms: the person accepts; the installed tool's call completes once", async () => {
        const { termsApi, consumer, client, asked } = await acceptingTerms(era);
        const added = await call(client, 'add_api_tools', { slug: termsApi.slug });
        const [name] = added.added as string[];
        const result = await call(client, name!, {});
        expect(result).toMatchObject({ isError: false, status: 200 });
        expect(asked).toEqual([expect.objectContaining({ mode: 'url', url: expect.stringMatching(/\/terms\//) })]);
        expect(await creditOf(consumer.orgId)).toBe(495);
      });

      it('checkout: the person pays on the checkout page; the tool answers once the credits are booked', async () => {
        const buyer = await createPerson(s.services);
        const { client, asked } = await connect(era, buyer.apiKey, async () => {
          await payPendingCheckout(buyer.orgId);
          return 'accept';
        });
        const result = await call(client, 'create_checkout', { pack: 'starter' });
        expect(result).toMatchObject({ isError: false, completed: true, checkout_url: asked[0]!.url });
        expect(await creditOf(buyer.orgId)).toBe(result.credit_cents);
        const purchases = await sql(
          s.db.url,
          "select amount_cents from ledger_entries where org_id = $1 and kind = 'purchase'",
          [buyer.orgId],
        );
        expect(purchases).toEqual([{ amount_cents: String(result.credit_cents) }]);
      });

      it('card setup: the person saves a card on the page; the tool answers once it is saved', async () => {
        const holder = await createPerson(s.services);
        const card = `pm_elicit_${era.replaceAll('-', '')}`;
        const { client, asked } = await connect(era, holder.apiKey, async () => {
          await saveCard(holder.orgId, card);
          return 'accept';
        });
        const result = await call(client, 'billing_setup', {});
        expect(result).toMatchObject({ isError: false, completed: true, url: asked[0]!.url });
        expect(asked).toEqual([expect.objectContaining({ mode: 'url', url: result.url })]);
        const [org] = await sql(s.db.url, 'select default_payment_method_id, billing_mode from orgs where id = $1', [
          holder.orgId,
        ]);
        expect(org).toEqual({ default_payment_method_id: card, billing_mode: 'card' });
        // A second setup with the card already saved waits for another card: declined, it answers the page as before.
        const again = await connect(era, holder.apiKey, () => Promise.resolve('decline'));
        const plain = await call(again.client, 'billing_setup', {});
        expect(plain).toMatchObject({ isError: false, url: expect.any(String) });
        expect(plain.completed).toBeUndefined();
      });

      it('without the capability, or when the person declines: the URL and the next step, nothing spent', async () => {
        const owner = await approvalModeOwner();
        const plain = await connect(era, owner.apiKey);
        const declined = await connect(era, owner.apiKey, () => Promise.resolve('decline'));
        for (const { client } of [plain, declined]) {
          const refused = await call(client, 'call_api', { slug: paid.slug, endpoint: '/paid' });
          expect(refused).toMatchObject({
            isError: true,
            error: {
              code: 'payment_required',
              details: {
                reason: 'approval_required',
                approval_url: `${s.config.urls.publicBase}/approve/${owner.keyId}`,
                next_step: expect.stringContaining('approve'),
              },
            },
          });
          const checkout = await call(client, 'create_checkout', { pack: 'starter' });
          expect(checkout).toMatchObject({ isError: false, checkout_url: expect.any(String) });
          expect(checkout.completed).toBeUndefined();
        }
        expect(declined.asked).toHaveLength(2);
        expect(await creditOf(owner.orgId)).toBe(1_000);
      });
    });
  }

  /** A hand-built 2026-07-28 `tools/call` declaring URL elicitation; the JSON-RPC answer (JSON or one SSE event). */
  async function modernToolCall(token: string, params: Record<string, unknown>): Promise<Data> {
    const res = await modernPost(served.server.url, token, 'tools/call', params, {}, { elicitation: { url: {} } });
    const text = await res.text();
    return JSON.parse(
      res.headers.get('content-type')?.includes('text/event-stream') ? /^data: (.+)$/m.exec(text)![1]! : text,
    );
  }

  it('2026-07-28 on the wire: input_required with the URL; a requestState altered, or echoed for other arguments or another key, is refused', async () => {
    const owner = await approvalModeOwner();
    const other = await approvalModeOwner();
    const args = { slug: paid.slug, endpoint: '/paid' };
    const first = await modernToolCall(owner.apiKey, { name: 'call_api', arguments: args });
    expect(first.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: {
        person: {
          method: 'elicitation/create',
          params: {
            mode: 'url',
            url: `${s.config.urls.publicBase}/approve/${owner.keyId}`,
            message: expect.any(String),
          },
        },
      },
      requestState: expect.any(String),
    });
    const state = first.result.requestState as string;
    const accept = { person: { action: 'accept' } };
    const retry = (token: string, a: Data, requestState: string) =>
      modernToolCall(token, { name: 'call_api', arguments: a, inputResponses: accept, requestState });
    const altered = `${state.slice(0, -4)}${state.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    for (const answer of [await retry(owner.apiKey, args, altered), await retry(other.apiKey, args, state)]) {
      expect(answer.error, JSON.stringify(answer)).toMatchObject({
        code: -32602,
        message: 'Invalid or expired requestState',
      });
    }
    // Echoed for other arguments: refused by the tool (an error result), nothing called.
    expect((await retry(owner.apiKey, { ...args, endpoint: '/paid?x=1' }, state)).result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'Invalid or expired requestState' }],
    });
    // Declined: today's refusal, with the URL and the next step; nothing spent.
    const declined = await modernToolCall(owner.apiKey, {
      name: 'call_api',
      arguments: args,
      inputResponses: { person: { action: 'decline' } },
      requestState: state,
    });
    expect(declined.result).toMatchObject({
      isError: true,
      structuredContent: { error: { code: 'payment_required', details: { next_step: expect.any(String) } } },
    });
    expect(await creditOf(owner.orgId)).toBe(1_000);
    // Approved: the accepted round completes the call; the same round sent again replays it (no idempotency_key was
    // given: the flow's own), nothing spent twice.
    expect((await approve(owner, 100)).status).toBe(200);
    const done = await retry(owner.apiKey, args, state);
    expect(done.result).toMatchObject({ structuredContent: { status: 200, billing: { cost_cents: 5 } } });
    const again = await retry(owner.apiKey, args, state);
    expect(again.result).toMatchObject({ structuredContent: { status: 200, billing: { replayed: true } } });
    expect(await creditOf(owner.orgId)).toBe(995);
  });

  /** The person accepts the listing's current terms on the consumer's behalf (what the terms page posts). */
  async function acceptTerms(consumer: Person, api: LiveApi): Promise<'accept'> {
    const doc = (await http(s.base, 'GET', `/v1/apis/${api.slug}/terms`)).body.data.documents[0];
    const accepted = await http(s.base, 'POST', `/v1/apis/${api.slug}/terms/accept`, {
      token: consumer.session,
      body: { document_id: doc.document_id, content_hash: doc.content_hash },
    });
    expect(accepted.status).toBe(200);
    return 'accept';
  }

  /** A consumer with 500 cents of credit, connected to act on `era`'s elicitations by accepting a new terms listing. */
  async function acceptingTerms(era: Era) {
    const termsApi = await termsListing();
    const consumer = await createConsumer(s.services, 500);
    return { termsApi, consumer, ...(await connect(era, consumer.apiKey, () => acceptTerms(consumer, termsApi))) };
  }

  /** A listing whose required terms a consumer must accept before calling it. */
  async function termsListing(): Promise<LiveApi> {
    const api = await createPaidApi(s.services, {
      provider,
      baseUrl: upstream.url,
      slug: `termsapi-${randomBytes(3).toString('hex')}`,
      endpoints: [{ method: 'GET', path: '/paid', priceCents: 5 }],
    });
    const doc = await http(s.base, 'POST', '/v1/provider/documents', {
      token: provider.session,
      body: {
        kind: 'terms',
        source: 'hosted',
        version: '1.0',
        body: TERMS,
        api_id: api.apiId,
        acceptance_mode: 'required',
      },
    });
    expect(doc.status).toBe(201);
    const activated = await http(s.base, 'POST', `/v1/provider/documents/${doc.body.data.document_id}/activate`, {
      token: provider.session,
    });
    expect(activated.status).toBe(200);
    return api;
  }

  /** What Stripe tells us when the person saves a card on the setup page: its signed `setup_intent.succeeded`. */
  async function saveCard(orgId: string, paymentMethod: string): Promise<void> {
    const { payload, header } = signStripeEvent(
      {
        id: `evt_elicit_${Date.now()}_${++events}`,
        type: 'setup_intent.succeeded',
        data: {
          object: {
            id: `seti_${paymentMethod}`,
            object: 'setup_intent',
            payment_method: paymentMethod,
            metadata: { org_id: orgId },
          },
        },
      },
      WEBHOOK_SECRET,
    );
    const res = await http(s.base, 'POST', '/v1/webhooks/stripe', {
      rawBody: payload,
      headers: { 'content-type': 'application/json', 'stripe-signature': header },
    });
    expect(res.status).toBe(200);
  }

  /** What Stripe tells us when the person pays the org's open checkout: its signed `checkout.session.completed`. */
  async function payPendingCheckout(orgId: string): Promise<void> {
    const [payment] = await sql<{ stripe_ref: string; credit_cents: string; amount_cents: string }>(
      s.db.url,
      "select stripe_ref, credit_cents, amount_cents from payments where org_id = $1 and status = 'pending' order by created_at desc limit 1",
      [orgId],
    );
    const { payload, header } = signStripeEvent(
      {
        id: `evt_elicit_${Date.now()}_${++events}`,
        type: 'checkout.session.completed',
        data: {
          object: {
            id: payment!.stripe_ref,
            object: 'checkout.session',
            mode: 'payment',
            payment_status: 'paid',
            amount_total: Number(payment!.amount_cents),
            metadata: { org_id: orgId, credit_cents: payment!.credit_cents },
          },
        },
      },
      WEBHOOK_SECRET,
    );
    const res = await http(s.base, 'POST', '/v1/webhooks/stripe', {
      rawBody: payload,
      headers: { 'content-type': 'application/json', 'stripe-signature': header },
    });
    expect(res.status).toBe(200);
  }
});
