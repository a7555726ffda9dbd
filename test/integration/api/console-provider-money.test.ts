// The provider's money, Stripe-clear (issue 31, section 5), on real paid calls through the gateway (Postgres, Redis,
// stripe-mock for the payout's transfer): the pricing form shows each price's marketplace fee and the provider's net
// by the one fee rule, with the rounding said where it changes a cent (20% of 3¢ is 0.6¢: a 1¢ fee), and previews
// typed prices without saving; analytics tells one story over REST and in the console (earned = fees + net; net =
// paid out + reversed + pending + available; available is what a payout pays), says where the net goes before and
// after payouts are set up, and names ledger rows in words, never `usage_batch:…`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import type { Person } from '../../helpers/accounts.js';
import { expectNoDrift, expectReconciled } from '../../helpers/books.js';
import { sql } from '../../helpers/db.js';
import { closeAll } from '../../helpers/fixtures.js';
import { startGatewayStack, type GatewayStack } from '../../helpers/gateway-stack.js';
import { http, serve } from '../../helpers/http.js';
import { startStripeMock, type StripeMock } from '../../helpers/stripe-mock.js';
import type { AnalyticsView } from '../../../core/providers/providers.schemas.js';

const CSRF = 'C'.repeat(32);

/** The text of an element's cell `data-<attr>="<value>"` in the row of endpoint `id` (the figures as shown). */
function cell(html: string, endpointId: string, attr: string, value: string): string {
  const row = new RegExp(`<tr data-endpoint="${endpointId}">([\\s\\S]*?)</tr>`).exec(html)?.[1] ?? '';
  return (
    new RegExp(`data-${attr}="${value}">([\\s\\S]*?)</td>`)
      .exec(row)?.[1]
      ?.replace(/<[^>]+>/g, ' ')
      .trim() ?? ''
  );
}

/** A console figure card's value by its `data-figure` name. */
const figure = (html: string, name: string) =>
  /<div class="figure">([^<]*)<\/div>/.exec(html.split(`data-figure="${name}"`)[1] ?? '')?.[1] ?? '';

/** Cents as the console writes them. */
const usd = (cents: number) => `$${(cents / 100).toFixed(2)}`;

describe('console: the provider’s money in one story, on real paid calls', () => {
  let stripe: StripeMock;
  let g: GatewayStack;
  let app: RunningHttpServer;
  let provider: Person;

  /** A console page as the provider (session cookie, and the CSRF cookie its forms' token must match). */
  async function page(path: string, form?: Record<string, string>) {
    const res = await fetch(`${app.url}${path}`, {
      method: form ? 'POST' : 'GET',
      headers: {
        cookie: `svc_session=${provider.session}; svc_csrf=${CSRF}`,
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams({ csrf: CSRF, ...form }).toString() : undefined,
      redirect: 'manual',
    });
    return { status: res.status, location: res.headers.get('location'), text: await res.text() };
  }
  const call = (p: Person, path: string) =>
    http(g.server.url, 'GET', `/v1/proxy/${g.api.slug}${path}`, { token: p.apiKey });
  const analytics = async () => {
    const res = await http(app.url, 'GET', '/v1/provider/analytics', { token: provider.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as AnalyticsView;
  };

  beforeAll(async () => {
    stripe = await startStripeMock();
    g = await startGatewayStack({
      endpoints: [
        { method: 'GET', path: '/cheap', priceCents: 3 },
        { method: 'GET', path: '/more', priceCents: 10 },
        { method: 'GET', path: '/free', priceCents: 0 },
      ],
      env: {
        STRIPE_SECRET_KEY: 'sk_test_123',
        STRIPE_API_BASE: stripe.url,
        PLATFORM_FEE_PERCENT: '20',
        PAYOUT_MINIMUM_CENTS: '10',
        GATEWAY_RATE_LIMIT_PER_MIN: '100000',
      },
    });
    provider = g.provider;
    await sql(g.stack.db.url, "update apis set name = 'Weather API' where id = $1", [g.api.apiId]);
    app = await serve(createApiApp(g.stack.services).callback());
  }, 120_000);
  afterAll(async () => {
    await expectNoDrift(g?.gateway, g?.stack.services);
    await expectReconciled(g?.stack.services);
    await closeAll(app, g);
    await stripe?.stop();
  });

  it('the pricing form shows each price’s fee and net, the 3¢ → 1¢ rounding said, and previews without saving', async () => {
    const apiPage = `/console/provider/apis/${g.api.apiId}`;
    const res = await page(apiPage);
    expect(res.status).toBe(200);
    const cheap = g.api.endpoints['GET /cheap']!;
    const more = g.api.endpoints['GET /more']!;
    const free = g.api.endpoints['GET /free']!;
    expect(res.text).toContain('Marketplace fee (20%)');
    expect(cell(res.text, cheap, 'price', 'now')).toBe('$0.03');
    expect(cell(res.text, cheap, 'fee', 'now')).toBe('$0.01 20% of 3¢ is 0.6¢, rounded to 1¢');
    expect(cell(res.text, cheap, 'net', 'now')).toBe('$0.02');
    expect(cell(res.text, more, 'fee', 'now')).toBe('$0.02'); // a whole cent: no rounding to explain
    expect(cell(res.text, more, 'net', 'now')).toBe('$0.08');
    expect(cell(res.text, free, 'fee', 'now')).toBe('$0.00');
    expect(cell(res.text, free, 'net', 'now')).toBe('$0.00');
    expect(res.text).toContain('a 3¢ call a 1¢ fee (you receive 2¢)');

    // "Preview fees": the typed prices' figures beside them, nothing saved.
    const preview = await page(`${apiPage}/pricing`, {
      intent: 'preview',
      [`price_${cheap}`]: '0.07',
      [`price_${more}`]: '0.10',
      [`price_${free}`]: '0',
    });
    expect(preview.status).toBe(200);
    expect(preview.text).toContain('<strong>Preview:</strong>');
    expect(cell(preview.text, cheap, 'fee', 'new')).toBe('$0.01 20% of 7¢ is 1.4¢, rounded to 1¢');
    expect(cell(preview.text, cheap, 'net', 'new')).toBe('$0.06');
    expect(cell(preview.text, cheap, 'fee', 'now')).toContain('$0.01'); // the price now is still 3¢
    expect(preview.text).toContain(
      `id="price_${cheap}" name="price_${cheap}" inputmode="decimal" size="8" value="0.07"`,
    );
    const [row] = await sql<{ price_cents: string }>(
      g.stack.db.url,
      'select price_cents from endpoints where id = $1',
      [cheap],
    );
    expect(row).toEqual({ price_cents: '3' });

    // A bad price in a preview: refused beside its field, what was typed kept.
    const bad = await page(`${apiPage}/pricing`, { intent: 'preview', [`price_${cheap}`]: '-0.01' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain(`value="-0.01" aria-invalid="true" aria-describedby="price_${cheap}-error"`);
    expect(bad.text).toContain(
      `<p id="price_${cheap}-error" class="error field-error">Price of GET /cheap: a price cannot be negative`,
    );
  });

  it('analytics: earned = fees + net, net = paid out + reversed + pending + available, the same in the console', async () => {
    const prepaid = await g.consumer(1_000);
    for (let i = 0; i < 12; i++) expect((await call(prepaid, '/cheap')).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await call(prepaid, '/more')).status).toBe(200);
    expect((await call(prepaid, '/free')).status).toBe(200);
    // A card-billed consumer: its calls are billed to its card, so the provider's share is pending until collected.
    const carded = await g.consumer(0);
    await sql(g.stack.db.url, "update orgs set billing_mode = 'card' where id = $1", [carded.orgId]);
    await g.stack.services.spend.forgetOrg(carded.orgId);
    for (let i = 0; i < 3; i++) expect((await call(carded, '/more')).status).toBe(200);
    await g.gateway.drain.flush();
    await g.stack.services.earnings.foldAll();

    // 12 × 3¢ (fee 1¢ each: 20% of 3¢ rounds up) + 5 × 10¢ (fee 2¢): earned 86, fees 22, net 64, of which the card
    // consumer's 3 × 8¢ = 24 is pending; nothing paid out; the net is credited to the provider's balance.
    const before = (await analytics()).earnings_to_date;
    expect(before).toMatchObject({
      gross_cents: 86,
      platform_fee_cents: 22,
      net_cents: 64,
      paid_out_cents: 0,
      reversed_cents: 0,
      pending_cents: 24,
      available_cents: 40,
      balance_cents: 64,
      payouts: 'none',
    });
    expect(before.where_earnings_go).toContain('credited to your organization’s balance');
    expect(before.where_earnings_go).toContain('payouts are not set up');
    expect(before.available_cents).toBe(await g.stack.services.payouts.unpaidEarnings(provider.orgId));

    // Payouts set up, then the month's payout: it pays what is available (within the balance).
    await sql(g.stack.db.url, "update orgs set connect_status = 'enabled', stripe_account_id = $2 where id = $1", [
      provider.orgId,
      `acct_${provider.orgId.slice(-10)}`,
    ]);
    const payout = await g.stack.services.payouts.payOut({ orgId: provider.orgId, period: '2026-10' });
    expect(payout).toMatchObject({ status: 'paid', amountCents: 40 });

    const view = await analytics();
    const e = view.earnings_to_date;
    expect(e).toMatchObject({ paid_out_cents: 40, pending_cents: 24, available_cents: 0, balance_cents: 24 });
    expect(e.gross_cents).toBe(e.platform_fee_cents + e.net_cents);
    expect(e.net_cents).toBe(e.paid_out_cents + e.reversed_cents + e.pending_cents + e.available_cents);
    expect(e.available_cents).toBe(await g.stack.services.payouts.unpaidEarnings(provider.orgId));
    expect(view.earnings_to_date.where_earnings_go).toContain('paid out through Stripe Connect');
    // The range's totals tell the same story: earned = fees + net, and GMV is what consumers paid.
    expect(view.totals).toMatchObject({
      gmv_cents: 86,
      provider_earnings_cents: 86,
      platform_fee_cents: 22,
      net_earnings_cents: 64,
      payouts_cents: 40,
    });

    // The console's page: the same figures, the identities written out, where the net goes, rows in words.
    const shown = await page('/console/provider/analytics');
    expect(shown.status).toBe(200);
    for (const [name, cents] of [
      ['gross', 86],
      ['fees', 22],
      ['net', 64],
      ['paid_out', 40],
      ['pending', 24],
      ['available', 0],
      ['balance', 24],
    ] as const) {
      expect(figure(shown.text, name), name).toBe(usd(cents));
    }
    expect(shown.text).toContain(
      'Earned $0.86 = marketplace fees $0.22 + net $0.64. Net $0.64 = paid out $0.40 + pending $0.24 + available $0.00.',
    );
    expect(shown.text).toContain('credited to your organization’s balance');
    expect(shown.text).toContain('Payout for 2026-10');
    expect(shown.text).toMatch(/Earnings from \d+ paid calls? on Weather API/);
    expect(shown.text).not.toContain('usage_batch:');
  });

  it('ledger rows are named in words on both sides: the calls they count add up to the calls made', async () => {
    const services = g.stack.services;
    const rows = (await services.ledger.history(provider.orgId, { limit: 500, offset: 0 })).items;
    const counted = (kind: string, pattern: RegExp) =>
      rows
        .filter((r) => r.kind === kind)
        .map((r) => {
          const m = pattern.exec(r.description);
          expect(m, r.description).not.toBeNull();
          return Number(m![1]);
        })
        .reduce((a, b) => a + b, 0);
    expect(counted('provider_earning', /^Earnings from (\d+) paid calls? on Weather API$/)).toBe(17);
    expect(counted('platform_fee', /^Marketplace fee on (\d+) paid calls? on Weather API$/)).toBe(17);
    expect(rows.find((r) => r.kind === 'payout')?.description).toBe('Payout for 2026-10');

    // The consumer's billing history (its own page): "N paid calls on Weather API", never the batch reference.
    const [consumer] = await sql<{ org_id: string }>(
      g.stack.db.url,
      `select u.org_id from usage_events u join orgs o on o.id = u.org_id
        where u.api_id = $1 and o.billing_mode = 'prepaid' limit 1`,
      [g.api.apiId],
    );
    const theirs = (await services.ledger.history(consumer!.org_id, { limit: 500, offset: 0 })).items;
    const calls = theirs
      .filter((r) => r.kind === 'usage')
      .map((r) => Number(/^(\d+) paid calls? on Weather API$/.exec(r.description)?.[1]));
    expect(calls.reduce((a, b) => a + b, 0)).toBe(14);
    const billing = await page('/console/billing');
    expect(billing.status).toBe(200);
    expect(billing.text).toMatch(/Earnings from \d+ paid calls? on Weather API/);
    expect(billing.text).toMatch(/Marketplace fee on \d+ paid calls? on Weather API/);
    expect(billing.text).not.toMatch(/usage_batch:|ubt_/);
  });
});
