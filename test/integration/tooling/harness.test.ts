// The shared test harness's own contract: stripe-mock answers the real Stripe SDK, loopback upstreams record what
// they see, and the SMTP capture parses what nodemailer sends (see mail.test.ts). Later suites rely on these.
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.js';
import { startStripeMock } from '../../helpers/stripe-mock.js';
import { startUpstream } from '../../helpers/upstream.js';
import { useStarted } from '../../helpers/suite.js';

describe('stripe-mock', () => {
  const mock = useStarted(startStripeMock, (m) => m.stop());

  it('serves the Stripe API to the real SDK and validates requests', async () => {
    const stripe = new Stripe('sk_test_123', {
      host: '127.0.0.1',
      port: mock().port,
      protocol: 'http',
      maxNetworkRetries: 0,
      telemetry: false,
    });
    const customer = await stripe.customers.create({ email: 'a@example.com', metadata: { org_id: 'org_1' } });
    expect(customer.id).toMatch(/^cus_/);
    const session = await stripe.checkout.sessions.create({
      mode: 'payment',
      success_url: 'https://example.com/ok',
      line_items: [
        { price_data: { currency: 'usd', unit_amount: 500, product_data: { name: 'Credits' } }, quantity: 1 },
      ],
    });
    expect(session.object).toBe('checkout.session');
    // stripe-mock checks parameters against Stripe's OpenAPI spec.
    await expect(
      stripe.customers.create({ not_a_parameter: 'x' } as unknown as Stripe.CustomerCreateParams),
    ).rejects.toThrow(/Request validation error/);
  });
});

describe('loopback upstream', () => {
  const upstream = useStarted(
    () => startUpstream(),
    (u) => u.close(),
  );

  it('records requests and lets a test swap the handler', async () => {
    expect(
      (await http(upstream().url, 'GET', '/weather?city=Oslo', { headers: { authorization: 'Bearer up' } })).body,
    ).toEqual({ ok: true });
    upstream().handle((_req, res, body) => {
      res.writeHead(429, { 'retry-after': '1' });
      res.end(body.toUpperCase());
    });
    const res = await http(upstream().url, 'POST', '/echo', {
      rawBody: 'hi',
      headers: { 'content-type': 'text/plain' },
    });
    expect([res.status, res.text]).toEqual([429, 'HI']);
    expect(upstream().seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['GET', '/weather?city=Oslo', ''],
      ['POST', '/echo', 'hi'],
    ]);
    expect(upstream().seen[0]!.headers.authorization).toBe('Bearer up');
  });
});
