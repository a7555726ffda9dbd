// Issue 31's acceptance, the visitor half, in Chromium on the real `npm start -- --demo` exactly as a newcomer runs it:
// a fresh data directory, embedded defaults (PGlite, in-process counters, its own Temporal dev server, embedded
// payments), mail printed in the terminal, and NO `UPSTREAM_ALLOW_PRIVATE` (the demo's own upstream is allowed by
// name). Following only links and forms from the home page: the search form → "convert miles to km" → the demo unit
// converter's listing → its "sign up to call it" step → the sign-up form with the 6-digit code read from npm start's
// output → back on the listing → the console (the $1.00 trial credit usable at once) → its Catalog finds the same
// listing (one implementation, the same snippet) → the listing's "Create a key" step → Keys, a key with the form's
// defaults (least privilege), its secret shown once → back to the listing by the link the key page offers → the quote
// form says the key may call it → the listing's curl snippet of the paid endpoint (GET /convert, 1 cent) run verbatim
// with `bash -c` and SVC_API_KEY → 200 and `meta.cost_cents` 1 → Usage lists the call and its cost, Overview and
// Billing the balance down by a cent. axe-core on every page (no violation at all); screenshots in
// test-results/newcomer-walk/; no navigation answered 4xx/5xx; the books reconcile at the end (`npm run admin --
// reconcile`, handed to the running npm start).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAxeClean } from '../helpers/axe.js';
import { CHROMIUM, failedNavigations, launchBrowser } from '../helpers/browser.js';
import { ROOT } from '../helpers/env.js';
import { codeMailedTo, startProcess, type RunningProcess } from '../helpers/processes.js';

const run = promisify(execFile);
const SHOTS = path.join(ROOT, 'test-results', 'newcomer-walk');
const SLUG = 'demo-unit-converter';
const EMAIL = 'newcomer@example.com';
const KEY_NAME = 'my laptop';

describe.skipIf(!existsSync(CHROMIUM))('a newcomer in Chromium on `npm start -- --demo`', () => {
  let dataDir: string;
  let proc: RunningProcess;
  let browser: Browser;
  let page: Page;
  let failed: string[];
  let key: string;
  let curl: string;

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mp-newcomer-walk-'));
    [proc, browser] = await Promise.all([
      startProcess({
        npmStart: true,
        npmArgs: ['--', '--demo'],
        embeddedTemporal: true,
        env: { DATA_DIR: dataDir },
        readyTimeoutMs: 180_000,
      }),
      launchBrowser(),
    ]);
    expect(proc.output()).toContain('demo: sample APIs ready');
    expect(proc.output()).toContain('mail to console');
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    failed = failedNavigations(page);
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await proc?.stop('SIGTERM');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  /** Screenshot the page and run axe-core on it: no violation at all. */
  const check = (name: string) => expectAxeClean(page, name, SHOTS);
  const main = async () => ((await page.textContent('main')) ?? '').replace(/\s+/g, ' ');
  const consoleNav = (name: string) =>
    page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();
  const listingUrl = () => `${proc.urls.api}/apis/${SLUG}`;
  const consoleListing = () => `${proc.urls.api}/console/catalog/apis/${SLUG}`;

  it('home → the search form → "convert miles to km" → the unit converter first → its listing', async () => {
    await page.goto(`${proc.urls.api}/`);
    await check('home');
    await page.getByLabel('Search the catalog').fill('convert miles to km');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/\/apis\?q=convert\+miles\+to\+km$/);
    await check('search');
    // No sort chosen: the form names what the results line says they are sorted by.
    expect(await page.locator('#sort option[value=""]').textContent()).toBe('Default (Relevance)');
    expect(await main()).toContain('sorted by Relevance');
    const first = page.locator('main table tbody tr').first();
    expect(await first.locator('a').first().textContent()).toBe('Unit Converter (demo)');
    expect((await first.textContent())?.replace(/\s+/g, ' ')).toContain('Free – $0.01 / call');

    await first.getByRole('link', { name: 'Unit Converter (demo)' }).click();
    await page.waitForURL(listingUrl());
    await check('listing-visitor');
    // The description's `code` spans are set as code, not shown with their backticks.
    expect(await page.locator('main p code', { hasText: 'npm start -- --demo' }).count()).toBe(1);
    const step = (await page.locator('section.step').textContent())?.replace(/\s+/g, ' ');
    expect(step).toContain('Sign up to call it');
    expect(step).toContain('A new account gets $1.00 of trial credit for paid calls.');
    // The snippets are for the paid endpoint, GET /convert at 1 cent, against this npm start's gateway.
    expect(await page.locator('#snippets-h').textContent()).toMatch(/^Call it: GET \/convert\?/);
    const paidRow = page.locator('main table tbody tr', { hasText: '/convert' });
    expect((await paidRow.textContent())?.replace(/\s+/g, ' ')).toContain('$0.01');
    curl = (await page.locator('#snippet-curl').textContent())!;
    expect(curl).toMatch(new RegExp(`^curl -sS '${proc.urls.gateway}/v1/proxy/${SLUG}/convert\\?`));
  }, 60_000);

  it('signs up from the listing’s step with the code npm start printed, and comes back to the listing', async () => {
    await page.locator('section.step').getByRole('link', { name: 'Create an account' }).click();
    await page.waitForURL(/\/signup\?next=/);
    await check('signup');
    await page.getByLabel('Email').fill(EMAIL);
    const since = proc.output().length;
    await page.getByRole('button', { name: 'Email me a code' }).click();
    await page.waitForSelector('text=We sent a 6-digit code');
    // No SMTP_URL: the page says where the mail went (the terminal running the marketplace), not "check your email".
    expect(await main()).toContain('printed in the terminal where the marketplace runs');
    await check('signup-code');
    await page.getByLabel('Code').fill(await codeMailedTo(proc, EMAIL, since));
    await page.getByRole('button', { name: 'Create my account' }).click();
    await page.waitForURL(listingUrl());
    expect(await page.textContent('header.site')).toContain(EMAIL);
    expect(await page.locator('#start-h').textContent()).toBe('Create a key to call it');
    await check('listing-signed-in');
  }, 60_000);

  it('the console: the $1.00 trial credit at once; its Catalog finds the same listing, with the key step', async () => {
    await page.getByRole('link', { name: 'Console', exact: true }).click();
    await page.waitForURL(`${proc.urls.api}/console`);
    // The code proved the address, so the trial credit is released at once (no "verify your email" step).
    expect(await page.locator('.cards .card').first().textContent()).toMatch(/Balance\s*\$1\.00/);
    await check('overview');

    await consoleNav('Catalog');
    await page.getByLabel('Search', { exact: true }).fill('convert miles to km');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/\/console\/catalog\?q=convert\+miles\+to\+km/);
    await check('catalog-search');
    await page.getByRole('link', { name: 'Unit Converter (demo)' }).first().click();
    await page.waitForURL(consoleListing());
    expect(await page.locator('#start-h').textContent()).toBe('Create a key to call it');
    // One implementation: the console's listing gives the storefront's snippet.
    expect(await page.locator('#snippet-curl').textContent()).toBe(curl);
    await check('catalog-listing');
  }, 60_000);

  it('Keys (from the listing’s step): a key with the form’s defaults, least privilege; its secret shown once', async () => {
    await page.locator('section.step').getByRole('link', { name: 'Create a key' }).click();
    await page.waitForURL(/\/console\/keys\?next=/);
    const boxes = await page.locator('input[name=scope]:checked').all();
    const ticked = await Promise.all(boxes.map((box) => box.getAttribute('value')));
    expect(ticked).toEqual(['catalog:read', 'proxy:call', 'usage:read']);
    await check('keys');
    await page.getByLabel('Name', { exact: true }).fill(KEY_NAME);
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForSelector('#secret');
    key = await page.inputValue('#secret');
    expect(key).toMatch(/^svc_live_\w+$/);
    expect(await main()).toContain(`Key “${KEY_NAME}” created. Copy its secret now: it is shown only this once.`);
    expect(await main()).toContain(`export SVC_API_KEY=${key}`);
    await check('key-created');
    const row = (await page.locator('main table tbody tr', { hasText: KEY_NAME }).textContent()) ?? '';
    const prefix = /(svc_live_\w+)…/.exec(row)?.[1];
    expect(prefix && key.startsWith(prefix)).toBe(true);
  }, 60_000);

  it('back to the listing by the key page’s link; the quote form says the new key may call GET /convert', async () => {
    await page.getByRole('link', { name: 'Back to Unit Converter (demo)' }).click();
    await page.waitForURL(consoleListing());
    expect(await page.locator('#start-h').textContent()).toBe('Call it with your key');
    expect(await page.locator('section.step').textContent()).toContain(KEY_NAME);
    await check('listing-with-key');

    await page.getByLabel('Endpoint', { exact: true }).selectOption('GET /convert');
    const option = (await page.locator('#quote-key option').allTextContents()).find((o) => o.startsWith(KEY_NAME));
    await page.getByLabel('With your key', { exact: true }).selectOption({ label: option! });
    await page.getByRole('button', { name: 'Get a quote' }).click();
    await page.waitForURL(/\/quote\?endpoint=GET\+%2Fconvert&key=key_/);
    expect(await page.locator('main .banner').textContent()).toBe(
      `The gateway would accept this call with your key ${KEY_NAME} now.`,
    );
    const price = page.locator('main table tr', { hasText: 'Price now' });
    expect((await price.locator('th, td').allTextContents()).map((c) => c.trim())).toEqual(['Price now', '$0.01']);
    await check('quote');
    await page.getByRole('link', { name: '← Unit Converter (demo)' }).click();
    await page.waitForURL(consoleListing());
    expect(await page.locator('#snippet-curl').textContent()).toBe(curl);
  }, 60_000);

  it('runs the listing’s curl snippet verbatim: 200, the conversion, meta.cost_cents 1', async () => {
    const { stdout } = await run('bash', ['-c', curl], {
      env: { PATH: process.env.PATH, SVC_API_KEY: key },
      timeout: 30_000,
    });
    const answer = JSON.parse(stdout) as { ok: boolean; data: Record<string, unknown>; meta: { cost_cents: number } };
    expect(answer).toMatchObject({
      ok: true,
      data: { value: 5, from: 'mi', to: 'km', dimension: 'length', result: 8.04672 },
      meta: { cost_cents: 1 },
    });
  }, 60_000);

  it('Usage lists the call and its cost; Overview and Billing show the balance down by a cent; Provider, test mode', async () => {
    await consoleNav('Usage');
    await page.waitForURL(`${proc.urls.api}/console/usage`);
    // Each call a row of cells: time, key, API, request, status, outcome, cost, latency.
    const rows = async () => {
      const out: string[][] = [];
      for (const row of await page.locator('main table:not(.visually-hidden) tbody tr').all()) {
        out.push((await row.locator('td, th').allTextContents()).map((c) => c.trim()));
      }
      return out;
    };
    await expect
      .poll(async () => (await page.reload(), (await rows()).map((cells) => cells.slice(1, 7))), { timeout: 20_000 })
      .toEqual([[KEY_NAME, SLUG, 'GET /convert', '200', 'Success', '$0.01']]);
    expect(await main()).toContain('1 call · 0 failed · $0.01 spent');
    await check('usage');

    await consoleNav('Overview');
    await expect
      .poll(async () => (await page.reload(), page.locator('.cards .card').first().textContent()), { timeout: 20_000 })
      .toMatch(/Balance\s*\$0\.99/);
    await check('overview-after');

    await consoleNav('Billing');
    await expect
      .poll(async () => (await page.reload(), page.locator('#history + table tbody tr').allTextContents()), {
        timeout: 20_000,
      })
      .toEqual([
        expect.stringMatching(/Paid calls\s*-\$0\.01\s*\$0\.99\s*1 paid call on Unit Converter \(demo\)/),
        expect.stringMatching(/Credit grant\s*\$1\.00\s*\$1\.00\s*Starter credit \(email verified\)/),
      ]);
    // Embedded payments: the page says so, and offers no billing portal (stripe-mock has none to send a browser to).
    expect(await main()).toContain('Test mode: this marketplace runs on embedded payments');
    expect(await page.getByRole('button', { name: 'Open the billing portal' }).count()).toBe(0);
    // Posted anyway (an old tab), the portal step says what is missing instead of a 303 to stripe-mock's made-up host.
    const csrf = await page.inputValue('form[action="/console/billing/card"] input[name=csrf]');
    const portal = await page
      .context()
      .request.post(`${proc.urls.api}/console/billing/portal`, { form: { csrf }, maxRedirects: 0 });
    expect(portal.status()).toBe(503);
    expect(await portal.text()).toContain('The billing portal needs a Stripe account (STRIPE_SECRET_KEY)');
    await check('billing');

    // The console's Provider section on embedded payments: no onboarding button that leads nowhere, but where
    // earnings stay until payouts can be set up.
    await consoleNav('Provider');
    await page.waitForSelector('text=You have no APIs yet');
    expect(await main()).toContain('so payouts cannot be set up here. Net earnings stay in your organization');
    expect(await page.getByRole('button', { name: 'Start payouts onboarding' }).count()).toBe(0);
    await check('provider');
    expect(failed).toEqual([]);
  }, 90_000);

  it('the books reconcile: `npm run admin -- reconcile`, handed to the running npm start, exits 0', async () => {
    const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'TEMPORAL_ADDRESS', 'UPSTREAM_ALLOW_PRIVATE']) delete env[name];
    const { stdout } = await run('npm', ['run', '--silent', 'admin', '--', 'reconcile'], {
      cwd: ROOT,
      env,
      timeout: 90_000,
    });
    expect(JSON.parse(stdout)).toMatchObject({ ok: true });
  }, 120_000);
});
