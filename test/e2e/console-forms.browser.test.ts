// Issue 31's forms and money pages in headless Chromium (sections 5 and 6), each screenshotted under
// test-results/console-forms/ and checked with axe-core (no serious or critical violation): refused forms with the
// message beside the field (keys, the provider's create form, sign-in, sign-up), the pricing form's fee and net with a
// preview of typed prices, and the provider's money story on Analytics after real paid calls through the gateway.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expectAxeClean } from '../helpers/axe.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../api/app.js';
import type { RunningHttpServer } from '../../platform/runtime/http-server.js';
import { expectNoDrift } from '../helpers/books.js';
import { launchBrowser } from '../helpers/browser.js';
import { sql } from '../helpers/db.js';
import { closeAll } from '../helpers/fixtures.js';
import { startGatewayStack, type GatewayStack } from '../helpers/gateway-stack.js';
import { http, serve } from '../helpers/http.js';

const OUT = path.resolve('test-results/console-forms');

describe('console forms and money pages in a browser', () => {
  let g: GatewayStack;
  let app: RunningHttpServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  const check = (name: string, on: Page = page) => expectAxeClean(on, name, OUT);

  /** The accessible description Chromium computes for an input: what a screen reader reads after its name. */
  const description = (selector: string) =>
    page.locator(selector).evaluate((el) => {
      const ids: string[] = (el.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean);
      const text = (id: string): string =>
        el.ownerDocument.getElementById(id)?.textContent?.trim() ?? `(missing #${id})`;
      return ids.map(text).join(' | ');
    });

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    g = await startGatewayStack({
      endpoints: [
        { method: 'GET', path: '/forecast', priceCents: 3 },
        { method: 'GET', path: '/alerts', priceCents: 10 },
      ],
      env: { PLATFORM_FEE_PERCENT: '20' },
    });
    await sql(g.stack.db.url, "update apis set name = 'Weather API' where id = $1", [g.api.apiId]);
    app = await serve(createApiApp(g.stack.services).callback());
    const consumer = await g.consumer(500);
    for (let i = 0; i < 4; i++) {
      const res = await http(g.server.url, 'GET', `/v1/proxy/${g.api.slug}/forecast`, { token: consumer.apiKey });
      expect(res.status).toBe(200);
    }
    await g.gateway.drain.flush();
    await g.stack.services.earnings.foldAll();
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addCookies([
      { name: 'svc_session', value: g.provider.session, url: app.url, httpOnly: true, sameSite: 'Lax' },
    ]);
    page = await context.newPage();
  }, 180_000);
  afterAll(async () => {
    await expectNoDrift(g?.gateway, g?.stack.services);
    await closeAll(context, browser, app, g);
  });

  it('Keys: least privilege ticked; a refused form keeps the values, each message read with its field', async () => {
    await page.goto(`${app.url}/console/keys`);
    for (const scope of ['catalog:read', 'proxy:call', 'usage:read']) {
      expect(await page.locator(`input[name=scope][value="${scope}"]`).isChecked(), scope).toBe(true);
    }
    for (const scope of ['keys:write', 'billing:write', 'provider:write']) {
      expect(await page.locator(`input[name=scope][value="${scope}"]`).isChecked(), scope).toBe(false);
    }
    await page.locator('#new-name').fill('Refused key');
    await page.locator('#new-budget').fill('ten dollars');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForSelector('#new-budget-error');
    expect(await page.inputValue('#new-name')).toBe('Refused key');
    expect(await page.inputValue('#new-budget')).toBe('ten dollars');
    expect(await page.getAttribute('#new-budget', 'aria-invalid')).toBe('true');
    expect(await description('#new-budget')).toBe(
      'Budget: enter an amount in dollars, like 5 or 5.00 (or leave it blank). | total; blank for none',
    );
    await check('keys-refused');
  });

  it('Provider: the create form names the textarea line (from 1) beside the field', async () => {
    await page.goto(`${app.url}/console/provider`);
    await page.getByLabel('Name', { exact: true }).fill('Line API');
    await page.locator('#slug').fill('line-api');
    await page.getByLabel('Summary', { exact: true }).fill('Lines from one');
    await page.getByLabel('Upstream base URL').fill('https://api.example.com');
    await page.locator('#endpoints').fill('# first line is a comment\nGET /ok 0.05\nGET /ok');
    await page.getByRole('button', { name: 'Create API' }).click();
    await page.waitForSelector('#endpoints-error');
    expect(await page.textContent('#endpoints-error')).toBe('Endpoints, line 3: GET /ok is already on line 2.');
    expect(await page.inputValue('#endpoints')).toBe('# first line is a comment\nGET /ok 0.05\nGET /ok');
    expect(await description('#endpoints')).toContain('Endpoints, line 3');
    await check('provider-create-refused');
  });

  it('Prices: fee and net beside each price, the 3¢ rounding said; Preview shows the typed prices’ figures', async () => {
    await page.goto(`${app.url}/console/provider/apis/${g.api.apiId}`);
    const forecast = page.locator(`tr[data-endpoint="${g.api.endpoints['GET /forecast']!}"]`);
    expect((await forecast.locator('[data-fee=now]').textContent())?.trim()).toBe(
      '$0.0120% of 3¢ is 0.6¢, rounded to 1¢',
    );
    expect((await forecast.locator('[data-net=now]').textContent())?.trim()).toBe('$0.02');
    await check('pricing');
    await page.getByLabel('/forecast').fill('0.12');
    await page.getByRole('button', { name: 'Preview fees' }).click();
    await page.waitForSelector('text=Nothing is saved until you press');
    const previewed = page.locator(`tr[data-endpoint="${g.api.endpoints['GET /forecast']!}"]`);
    expect((await previewed.locator('[data-fee=new]').textContent())?.trim()).toBe(
      '$0.0220% of 12¢ is 2.4¢, rounded to 2¢',
    );
    expect((await previewed.locator('[data-net=new]').textContent())?.trim()).toBe('$0.10');
    expect(await page.inputValue('#price_' + g.api.endpoints['GET /forecast']!)).toBe('0.12');
    await check('pricing-preview');
  });

  it('Analytics: the money story after paid calls, rows in words', async () => {
    await page.goto(`${app.url}/console/provider/analytics`);
    const main = (await page.textContent('main'))!;
    expect(main).toContain('Earned $0.12 = marketplace fees $0.04 + net $0.08.');
    expect(main).toContain('Net $0.08 = paid out $0.00 + pending $0.00 + available $0.08.');
    expect(main).toContain('credited to your organization’s balance');
    expect(main).toMatch(/Earnings from \d paid calls? on Weather API/);
    expect(main).not.toContain('usage_batch:');
    await check('analytics');
  });

  it('Sign-in and sign-up: a refused address stays, its message beside it', async () => {
    const visitor = await browser.newContext();
    const p = await visitor.newPage();
    try {
      await p.goto(`${app.url}/signup`);
      await p.getByLabel('Email').fill('ann@example');
      await p.getByLabel(/Your name/).fill('Ann');
      // Chromium's own check would stop a malformed address before it is sent; this one passes it, the server not.
      await p.getByRole('button', { name: 'Email me a code' }).click();
      await p.waitForSelector('#email-error');
      expect(await p.textContent('#email-error')).toBe('Email: must be an email address.');
      expect(await p.inputValue('#email')).toBe('ann@example');
      expect(await p.inputValue('#name')).toBe('Ann');
      await check('signup-refused', p);
    } finally {
      await visitor.close();
    }
  });
});
