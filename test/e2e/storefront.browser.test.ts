// Issue 31's storefront walk in headless Chromium against the real processes (all roles of scripts/start.ts on real
// Postgres, Redis, Temporal and an SMTP capture): a provider's API, served by a loopback upstream of this test, is
// published through the real workflow; a visitor goes home → the storefront → searches → opens the listing → signs
// up from its "sign up to call it" step (the code from the mail) → creates a key in the console → runs the listing
// page's curl snippet as it is, with SVC_API_KEY set to the new key (`bash -c`) → the console's Usage page shows
// the call. Every storefront page is checked with axe-core (no serious or critical violation), signed out and in.
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Browser, Page } from 'playwright-core';
import { expectAxeClean } from '../helpers/axe.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerson, type Person } from '../helpers/accounts.js';
import { failedNavigations, launchBrowser } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { codeFromMail } from '../helpers/full-stack.js';
import { http, describe as show } from '../helpers/http.js';
import { waitFor } from '../helpers/ports.js';
import { processEnv, startProcess, type RunningProcess } from '../helpers/processes.js';
import { createTestStack, NO_TEMPORAL, type TestStack } from '../helpers/services.js';
import { startSmtpCapture, type SmtpCapture } from '../helpers/smtp.js';
import { startTemporal } from '../helpers/temporal.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

const OUT = path.resolve('test-results/storefront');
const run = promisify(execFile);

/** A screenshot and an axe-core pass over the page: no violation at all. */
const checkPage = (page: Page, name: string) => expectAxeClean(page, name, OUT);

describe('the storefront in a browser, against the real processes', () => {
  let db: TestDatabase;
  let temporal: { env: TestWorkflowEnvironment; address: string };
  let smtp: SmtpCapture;
  let upstream: Upstream;
  let proc: RunningProcess;
  let stack: TestStack;
  let provider: Person;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    [db, temporal, smtp, upstream] = await Promise.all([
      createTestDatabase(),
      startTemporal(),
      startSmtpCapture(),
      startUpstream((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ city: 'Bergen', forecast: 'rain', path: req.url }));
      }),
    ]);
    proc = await startProcess({
      roles: ['all'],
      env: processEnv(db.url, temporal.address, { SMTP_URL: smtp.url, UPSTREAM_ALLOW_PRIVATE: 'true' }),
      readyTimeoutMs: 120_000,
    });
    // The provider: a person written to the shared database; their API is created and published over HTTP.
    stack = await createTestStack({ db, temporalAddress: NO_TEMPORAL });
    provider = await createPerson(stack.services);
    const api = proc.urls.api;
    const profile = await http(api, 'PATCH', '/v1/me/profile', {
      token: provider.session,
      body: { slug: 'fjord-labs', display_name: 'Fjord Labs' },
    });
    expect(profile.status, show(profile)).toBe(200);
    const created = await http(api, 'POST', '/v1/provider/apis', {
      token: provider.session,
      body: {
        name: 'Fjord Forecasts',
        slug: 'fjord-forecasts',
        summary: 'Rain or shine for every fjord, hour by hour',
        base_url: upstream.url,
        category: 'weather',
        endpoints: [
          {
            method: 'GET',
            path: '/forecast/{city}',
            summary: 'The forecast for a city',
            price_cents: 5,
            input_schema: {
              type: 'object',
              properties: {
                path: {
                  type: 'object',
                  properties: { city: { type: 'string', example: 'bergen' } },
                  required: ['city'],
                },
              },
            },
          },
          { method: 'GET', path: '/health', price_cents: 0 },
        ],
      },
    });
    expect(created.status, show(created)).toBe(201);
    const published = await http(api, 'POST', `/v1/provider/apis/${created.body.data.api_id}/publish`, {
      token: provider.session,
      body: { accept_terms: true },
    });
    expect([200, 202], show(published)).toContain(published.status);
    await waitFor(
      async () => (await http(api, 'GET', '/v1/search?q=fjord+forecasts')).body.data?.[0]?.slug === 'fjord-forecasts',
      { timeoutMs: 30_000, what: 'the published listing in search' },
    );
    browser = await launchBrowser();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await proc?.stop();
    await stack?.close();
    await Promise.all([temporal?.env.teardown(), smtp?.close(), upstream?.close()]);
    await db?.drop();
  }, 60_000);

  it('home → storefront → search → listing → sign up → key → the curl snippet as it is → Usage shows the call', async () => {
    const base = proc.urls.api;
    const email = 'storefront-visitor@example.com';
    const context = await browser.newContext();
    const page = await context.newPage();
    const failed = failedNavigations(page);

    await page.goto(`${base}/`);
    await checkPage(page, 'home');
    await page.getByRole('link', { name: 'All APIs' }).click();
    await page.waitForURL(`${base}/apis`);
    await checkPage(page, 'apis');
    await page.getByLabel('Search', { exact: true }).fill('fjord forecasts');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/\/apis\?q=fjord\+forecasts/);
    await checkPage(page, 'apis-search');
    await page.getByRole('link', { name: 'Fjord Forecasts' }).click();
    await page.waitForURL(`${base}/apis/fjord-forecasts`);
    await checkPage(page, 'listing-anonymous');
    const curl = (await page.locator('#snippet-curl').textContent())!;
    expect(curl).toContain(`${proc.urls.gateway}/v1/proxy/fjord-forecasts/forecast/bergen`);

    // The listing's own step: "Sign up to call it", then back on the listing, signed in.
    await page.locator('section.step').getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel(/Your name/).fill('Storefront Visitor');
    await page.getByRole('button', { name: 'Email me a code' }).click();
    await page.waitForSelector('text=We sent a 6-digit code');
    const mail = await smtp.waitForMail(email, { subject: /code/i });
    await page.getByLabel('Code').fill(codeFromMail(mail.text));
    await page.getByRole('button', { name: 'Create my account' }).click();
    await page.waitForURL(`${base}/apis/fjord-forecasts`);
    expect(await page.textContent('header.site')).toContain(email);
    await checkPage(page, 'listing-signed-in');

    // The trial credit (released by a workflow once the code proved the address), then a key from Keys.
    await expect
      .poll(async () => (await page.goto(`${base}/console`), page.textContent('.cards')), { timeout: 30_000 })
      .toContain('$1.00');
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Keys', exact: true }).click();
    await page.locator('#new-name').fill('storefront snippet');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForSelector('#secret');
    const key = await page.inputValue('#secret');
    expect(key).toMatch(/^svc_live_/);

    // The snippet exactly as the page shows it, with the key in SVC_API_KEY.
    const { stdout } = await run('bash', ['-c', curl], { env: { PATH: process.env.PATH, SVC_API_KEY: key } });
    const answer = JSON.parse(stdout) as {
      ok: boolean;
      data: { city: string; path: string };
      meta: { cost_cents: number };
    };
    expect(answer).toMatchObject({
      ok: true,
      data: { city: 'Bergen', path: '/forecast/bergen' },
      meta: { cost_cents: 5 },
    });

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Usage', exact: true }).click();
    await expect
      .poll(
        async () => (await page.reload(), page.locator('main table:not(.visually-hidden) tbody tr').allTextContents()),
        {
          timeout: 20_000,
        },
      )
      .toEqual([expect.stringMatching(/storefront snippet[\s\S]*fjord-forecasts[\s\S]*\$0\.05/)]);
    expect(failed).toEqual([]);
    await context.close();
  }, 180_000);

  it('every other storefront page passes axe, signed out and signed in', async () => {
    const base = proc.urls.api;
    const pages = [
      '/providers/fjord-labs',
      '/categories/weather',
      '/leaderboards',
      '/leaderboards/top_grossing',
      '/market',
      '/apis/fjord-forecasts/quote?endpoint=GET+%2Fforecast%2Fbergen',
      '/apis?pricing=paid&min_price=0.01&max_price=1&sort=price&callable=true',
      '/apis/no-such-api',
      '/docs/README.md',
    ];
    for (const signedIn of [false, true]) {
      const context = await browser.newContext();
      if (signedIn) {
        await context.addCookies([{ name: 'svc_session', value: provider.session, url: base }]);
      }
      const page = await context.newPage();
      for (const p of [...pages, ...(signedIn ? ['/console/catalog', '/console/catalog/apis/fjord-forecasts'] : [])]) {
        const res = await page.goto(`${base}${p}`);
        expect(res!.status(), p).toBe(p === '/apis/no-such-api' ? 404 : 200);
        await checkPage(page, `${signedIn ? 'in' : 'out'}${p.replace(/[/?=&+%.]+/g, '-')}`);
      }
      await context.close();
    }
  }, 180_000);
});
