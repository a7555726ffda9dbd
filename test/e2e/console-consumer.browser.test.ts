// The console's consumer sections in headless Chromium against the real control plane and an in-process gateway
// (real Postgres, Redis, stripe-mock, an SMTP capture): a person signs in with the mailed code, creates a key with caps,
// makes paid calls and sees them in the spend chart, approves a pending spend, edits caps, revokes (after confirming),
// filters usage and downloads the CSV, and goes from a credit pack to Stripe Checkout. Every page is screenshotted under
// test-results/console-consumer/ and checked with axe-core (no serious or critical violation).
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expectAxeClean } from '../helpers/axe.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../api/app.js';
import type { RunningHttpServer } from '../../platform/runtime/http-server.js';
import { createGatewayHandler, type GatewayHandler } from '../../gateway/app.js';
import type { Person } from '../helpers/accounts.js';
import { launchBrowser } from '../helpers/browser.js';
import { codeFromMail } from '../helpers/full-stack.js';
import { expectFailure, http, serve } from '../helpers/http.js';
import type { LiveApi } from '../helpers/listings.js';
import { createTestStack, type TestStack } from '../helpers/services.js';
import { startSmtpCapture, type SmtpCapture } from '../helpers/smtp.js';
import { startStripeMock, type StripeMock } from '../helpers/stripe-mock.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { createConsumer, createPaidApi, closeAll } from '../helpers/fixtures.js';
import { expectNoDrift } from '../helpers/books.js';

const OUT = path.resolve('test-results/console-consumer');

describe('console consumer sections in a browser', () => {
  let stripe: StripeMock;
  let smtp: SmtpCapture;
  let upstream: Upstream;
  let stack: TestStack;
  let api: RunningHttpServer;
  let gateway: GatewayHandler;
  let gw: RunningHttpServer;
  let listing: LiveApi;
  let person: Person;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let secret: string;

  /** A screenshot of the page and an axe-core pass over it: no violation at all. */
  const check = (name: string) => expectAxeClean(page, `console-${name}`, OUT);

  /** Follow the console's nav to a section. */
  const section = (name: string) =>
    page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();

  const call = (key: string, endpoint: 'paid' | 'boom') =>
    http(gw.url, 'GET', `/v1/proxy/${listing.slug}/${endpoint}`, { token: key });

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    [stripe, smtp, upstream] = await Promise.all([startStripeMock(), startSmtpCapture(), startUpstream()]);
    upstream.handle((req, res) => {
      res.writeHead(req.url?.startsWith('/boom') ? 500 : 200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    stack = await createTestStack({
      env: { SMTP_URL: smtp.url, STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_API_BASE: stripe.url },
    });
    api = await serve(createApiApp(stack.services).callback());
    gateway = createGatewayHandler(stack.services);
    gw = await serve(gateway);
    listing = await createPaidApi(stack.services, {
      baseUrl: upstream.url,
      endpoints: [
        { method: 'GET', path: '/paid', priceCents: 5 },
        { method: 'GET', path: '/boom', priceCents: 5 },
      ],
    });
    person = await createConsumer(stack.services, 1_000);
    browser = await launchBrowser();
    context = await browser.newContext({ acceptDownloads: true });
    page = await context.newPage();
  }, 180_000);
  afterAll(async () => {
    await expectNoDrift(gateway, stack?.services);
    await closeAll(context, browser, gw, gateway, api, stack, upstream, smtp);
    await stripe?.stop();
  });

  it('signs in with the mailed code and lands on the Overview (empty: no calls yet)', async () => {
    await page.goto(`${api.url}/console`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.getByLabel('Email').fill(person.email);
    await page.getByRole('button', { name: 'Email me a code' }).click();
    await page.waitForSelector('text=6-digit code');
    const mail = await smtp.waitForMail(person.email, { subject: /sign-in code/ });
    await page.getByLabel('Code').fill(codeFromMail(mail.text));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${api.url}/console`);
    await expect.poll(() => page.title()).toContain('Overview');
    expect(await page.textContent('main')).toContain('No calls in the last 30 days');
    expect(await page.textContent('main')).toContain('$10.00');
    await check('overview-empty');
  });

  it('creates a key with caps from Keys; its secret is shown once', async () => {
    await section('Keys');
    await page.waitForURL(`${api.url}/console/keys`);
    await page.locator('#new-name').fill('Browser key');
    await page.locator('#new-budget').fill('5');
    await page.locator('#new-daily_cap').fill('2.00');
    await page.locator('#new-per_call_max').fill('0.10');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForSelector('#secret');
    secret = await page.inputValue('#secret');
    expect(secret).toMatch(/^svc_/);
    // Post/Redirect/Get: the POST answered 303, the secret is on the page it led to, in no URL.
    expect(page.url()).toBe(`${api.url}/console/keys?done=created`);
    expect(page.url()).not.toContain(secret);
    const row = page.locator('tr', { hasText: 'Browser key' }).first();
    expect(await row.textContent()).toContain('$0.00 / $5.00');
    await check('keys-created');
    await page.reload(); // a reload shows it no more, and creates no second key
    expect(await page.content()).not.toContain(secret);
    expect(await page.textContent('main')).toContain('Its secret was shown once');
    expect(await page.locator('tr', { hasText: 'Browser key' }).count()).toBe(1);
    await page.goto(`${api.url}/console/keys`); // the list never shows it again
    expect(await page.content()).not.toContain(secret);
  });

  it('after paid calls, the Overview shows a non-empty spend chart, the calls and the error rate', async () => {
    const first = await call(secret, 'paid');
    expect(first.status, JSON.stringify(first.body) + secret).toBe(200);
    for (let i = 0; i < 3; i++) expect((await call(secret, 'paid')).status).toBe(200);
    expect((await call(secret, 'boom')).status).toBeGreaterThanOrEqual(500);
    await gateway.drain.flush();
    await page.goto(`${api.url}/console`);
    const spend = page.locator('figure.chart', { hasText: 'Spend per day' });
    const heights = await spend
      .locator('svg rect')
      .evaluateAll((rects) => rects.map((r) => Number(r.getAttribute('height'))));
    expect(heights.some((h) => h > 0)).toBe(true);
    const today = new Date().toISOString().slice(0, 10);
    const cells = await spend.locator('table tr', { hasText: today }).locator('td').allTextContents();
    expect(cells).toEqual(['$0.20']);
    const main = (await page.textContent('main'))!;
    expect(main).toContain('$0.20'); // this month's spend
    expect(main).toMatch(/Calls, last 30 days\s*5\s*1 failed/);
    expect(main).toContain('20.0%');
    expect(await spend.locator('svg title').first().textContent()).toContain('Spend per day');
    await check('overview');
  });

  it('an approval-mode key gets 402 approval_required; its approval waits on Keys; Approve lets the next call through', async () => {
    await page.goto(`${api.url}/console/keys`);
    await page.locator('#new-name').fill('Approval key');
    await page.locator('#new-approval').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForSelector('#secret');
    const approvalKey = await page.inputValue('#secret');
    const refused = await call(approvalKey, 'paid');
    expectFailure(refused, 402, 'payment_required');
    expect(refused.body.error.details.reason).toBe('approval_required');

    await page.goto(`${api.url}/console/keys`);
    const pending = page.locator('tr', { hasText: 'Approval key' }).filter({ hasText: 'Waiting for approval' });
    await expect.poll(() => pending.count()).toBe(1);
    await check('keys-pending-approval');
    await pending.locator('input[name=amount]').fill('0.10');
    await pending.getByRole('button', { name: /^Approve/ }).click();
    await page.waitForURL(`${api.url}/console/keys?done=approved`);
    expect(await page.textContent('[role=status]')).toContain('Spend approved.');
    expect(await page.locator('tr', { hasText: 'Approval key' }).last().textContent()).toContain('$0.10 left');
    expect((await call(approvalKey, 'paid')).status).toBe(200);
    await gateway.drain.flush();

    // Revoke it: the gateway refuses it from then on.
    // Revoking asks first: the link leads to a confirmation page, and only its button revokes.
    await page.goto(`${api.url}/console/keys`);
    await page.getByRole('link', { name: 'Revoke Approval key' }).click();
    await page.waitForSelector('text=This cannot be undone');
    await check('keys-revoke-confirm');
    expect(await page.locator('tr', { hasText: 'Approval key' }).count()).toBe(0); // a page of its own
    await page.getByRole('button', { name: 'Yes, revoke “Approval key”' }).click();
    await page.waitForURL(`${api.url}/console/keys?done=revoked`);
    expect((await call(approvalKey, 'paid')).status).toBe(401);
    expect(await page.locator('tr', { hasText: 'Approval key' }).count()).toBe(0);
  });

  it('edits caps: the bar shows spend against the new budget', async () => {
    const row = page.locator('tr', { hasText: 'Browser key' }).first();
    await row.getByText('Edit caps').click();
    await row.locator('input[name=budget]').fill('10');
    await row.getByRole('button', { name: /^Save caps/ }).click();
    await page.waitForURL(`${api.url}/console/keys?done=caps`);
    expect(await page.textContent('[role=status]')).toContain('Caps saved.');
    expect(await page.locator('tr', { hasText: 'Browser key' }).first().textContent()).toContain('$0.20 / $10.00');
    await check('keys');
  });

  it('Usage: filters by outcome, key and API; charts; the CSV has the filtered rows', async () => {
    await section('Usage');
    await page.waitForURL(`${api.url}/console/usage`);
    expect(await page.locator('main table:not(.visually-hidden) tbody tr').count()).toBe(6);
    await page.getByLabel('Outcome').selectOption('failed');
    await page.getByLabel('Key').selectOption({ label: (await keyOption(page, 'Browser key'))! });
    await page.getByLabel('API (slug)').fill(listing.slug);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/outcome=failed/);
    const rows = page.locator('main table:not(.visually-hidden) tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('Failed');
    expect(await page.locator('figure.chart', { hasText: 'Calls per day' }).count()).toBe(1);
    await check('usage-filtered');

    await page.getByLabel('Outcome').selectOption('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/outcome=&|outcome=$/);
    await check('usage');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^usage-\d{4}-\d{2}-\d{2}-to-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = readFileSync(await download.path(), 'utf8')
      .trim()
      .split('\r\n');
    expect(csv[0]).toMatch(/^created_at,request_id,key_id,key_name,api_slug,.*cost_cents,cost_usd/);
    expect(csv).toHaveLength(1 + 5); // the Browser key's five calls (the filter kept key and API)
    const paid = csv.slice(1).filter((l) => l.includes(',success,'));
    expect(paid).toHaveLength(4);
    for (const line of paid) {
      expect(line).toContain(`,Browser key,${listing.slug},GET,`);
      expect(line).toMatch(/,\/?paid,200,success,5,0\.05,/);
    }
  });

  it('Billing: packs, the ledger history, and a pack leads to Stripe Checkout', async () => {
    await section('Billing');
    await page.waitForURL(`${api.url}/console/billing`);
    const main = (await page.textContent('main'))!;
    expect(main).toContain('Buy starter');
    const rows = await page.locator('#history + table tbody tr').allTextContents();
    expect(rows.at(-1)).toContain('Credit grant');
    expect(rows[0]).toContain('Paid calls');
    // The grant and five successful paid calls (failed calls cost nothing). Paid calls are booked per batch (one
    // ledger row per commit, memo "N paid calls"), so how many rows they take depends on timing; their sum does not.
    const calls = rows.slice(0, -1).map((text) => Number(/(\d+) paid calls?/.exec(text)?.[1]));
    expect(calls.reduce((sum, n) => sum + n, 0)).toBe(5);
    await check('billing');

    // Each Stripe step answers 303 to Stripe's hosted page, and the page's CSP lets the browser follow it there.
    for (const button of [/^Buy starter/, /^Add a card/]) {
      await page.goto(`${api.url}/console/billing`);
      const toStripe = page.waitForRequest((r) => r.url().startsWith('https://checkout.stripe.com/'));
      await page.getByRole('button', { name: button }).click();
      expect((await toStripe).url()).toMatch(/^https:\/\/checkout\.stripe\.com\//);
      await page.waitForURL((u) => !u.href.startsWith(api.url)); // left for Stripe (offline here: an error page)
    }
    // The portal: stripe-mock answers a made-up host (live Stripe: billing.stripe.com, which the CSP allows), so
    // check the 303 itself, posted with the page's session and CSRF token.
    await page.goto(`${api.url}/console/billing`);
    const csrf = await page.inputValue('form[action="/console/billing/portal"] input[name=csrf]');
    const portal = await context.request.post(`${api.url}/console/billing/portal`, { form: { csrf }, maxRedirects: 0 });
    expect(portal.status()).toBe(303);
    expect(portal.headers().location).toMatch(/^https:\/\/\S+\/session\//);
  });
});

/** The label of the Key filter's option for a key name (it carries the key's prefix). */
async function keyOption(page: Page, name: string): Promise<string | undefined> {
  const labels = await page.locator('#f-key option').allTextContents();
  return labels.find((l) => l.startsWith(`${name} (`));
}
