// The console's Provider and Catalog sections in headless Chromium against the full stack (Postgres, Temporal with
// the worker, SMTP capture) and a loopback upstream: a verified provider signs in with the emailed code, creates an
// API from the form, prices it, verifies and publishes it (the workflow runs for real), then searches the catalog
// for it and opens its listing, category and leaderboard pages. Every page is screenshotted under
// test-results/console/ and passes axe-core without a serious or critical violation.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expectAxeClean } from '../helpers/axe.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../core/ids.js';
import { createPerson, type Person } from '../helpers/accounts.js';
import { createApiFromConsole, launchBrowser, publishUntilLive } from '../helpers/browser.js';
import { sql } from '../helpers/db.js';
import { ROOT } from '../helpers/env.js';
import { codeFromMail, startFullStack, type FullStack } from '../helpers/full-stack.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { closeAll } from '../helpers/fixtures.js';

const SHOTS = path.join(ROOT, 'test-results', 'console');

/** Screenshot the page and run axe-core on it: no violation at all. */
const check = (page: Page, name: string) => expectAxeClean(page, `console-${name}`, SHOTS);

describe('console in a browser: publish an API, then find it in the catalog', () => {
  let s: FullStack;
  let upstream: Upstream;
  let provider: Person;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    upstream = await startUpstream();
    [s, browser] = await Promise.all([startFullStack({ env: { UPSTREAM_ALLOW_PRIVATE: 'true' } }), launchBrowser()]);
    provider = await createPerson(s.services);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
  }, 180_000);
  afterAll(async () => {
    await closeAll(context, browser, s, upstream);
  });

  it('signs in with the emailed code and lands on Provider, with its empty state', async () => {
    await page.goto(`${s.base}/console/provider`);
    await expect.poll(() => page.title()).toContain('Sign in');
    await page.getByLabel('Email').fill(provider.email);
    await page.getByRole('button', { name: 'Email me a code' }).click();
    await page.waitForSelector('text=6-digit code');
    const mail = await s.smtp.waitForMail(provider.email, { subject: /sign-in code/ });
    await page.getByLabel('Code').fill(codeFromMail(mail.text));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${s.base}/console/provider`);
    await page.waitForSelector('text=You have no APIs yet');
    await check(page, 'provider-empty');
  });

  it('creates an API from the form, prices it, verifies and publishes it', async () => {
    await createApiFromConsole(page, {
      name: 'Browser Weather',
      slug: 'browser-weather',
      summary: 'Forecasts published from the web console',
      upstream: upstream.url,
      category: 'weather',
      endpoints: 'GET /forecast 0.05 Forecast for today\nGET /alerts',
    });
    await check(page, 'provider-api-draft');

    // The pricing editor: dollars per endpoint.
    await page.getByLabel('/forecast').fill('0.08');
    await page.getByRole('button', { name: 'Save prices' }).click();
    await page.waitForSelector('text=Prices saved.');

    await page.getByRole('button', { name: 'Verify now' }).click();
    await page.waitForSelector('text=Verification finished');
    expect(await page.textContent('main')).toContain('Smoke test passed');

    await publishUntilLive(page);
    await check(page, 'provider-api-live');
    const [row] = await sql<{ status: string; price_cents: string }>(
      s.db.url,
      `select a.status, e.price_cents from apis a join endpoints e on e.api_id = a.id
        where a.slug = 'browser-weather' and e.path = '/forecast'`,
    );
    expect(row).toEqual({ status: 'live', price_cents: '8' });
  });

  it('shows analytics, documents and requests pages', async () => {
    // Some paid traffic on the new API (as the gateway records it), so the charts have data.
    const [api] = await sql<{ id: string; endpoint: string }>(
      s.db.url,
      `select a.id, e.id as endpoint from apis a join endpoints e on e.api_id = a.id
        where a.slug = 'browser-weather' and e.path = '/forecast'`,
    );
    const consumer = await createPerson(s.services);
    for (let i = 0; i < 12; i++) {
      await sql(
        s.db.url,
        `insert into usage_events (id, org_id, key_id, api_slug, api_id, endpoint_id, method, path, status, outcome,
           cost_cents, price_cents_effective, latency_ms, request_id, created_at)
         values ($1, $2, $3, 'browser-weather', $4, $5, 'GET', '/forecast', $6, $7, $8, 8, $9, $10,
           now() - make_interval(hours => $11))`,
        [
          newId('usage'),
          consumer.orgId,
          consumer.keyId,
          api!.id,
          api!.endpoint,
          i % 4 === 3 ? 502 : 200,
          i % 4 === 3 ? 'failed' : 'success',
          i % 4 === 3 ? 0 : 8,
          40 + i * 7,
          `req-${i}`,
          i * 9,
        ],
      );
    }
    await s.services.rollups.rollupUsage();
    await s.services.rollups.rollupScores();
    await s.services.rollups.rollupRanks();

    await page.getByRole('link', { name: 'Analytics' }).click();
    await page.waitForSelector('figure.chart svg');
    expect(await page.textContent('main')).toContain('$0.72');
    await check(page, 'provider-analytics');

    await page.getByRole('link', { name: 'Documents' }).click();
    await page.waitForSelector('text=No documents yet');
    await check(page, 'provider-documents');

    await page.getByRole('link', { name: 'Requests', exact: true }).click();
    await page.waitForSelector('text=No open requests');
    await check(page, 'provider-requests');
  });

  it('searches the catalog and opens the listing, its category and a leaderboard', async () => {
    await page.getByRole('link', { name: 'Catalog', exact: true }).click();
    await page.waitForSelector('text=Leaderboards');
    await check(page, 'catalog');

    await page.getByLabel('Search', { exact: true }).fill('browser weather forecasts');
    await page.getByLabel('Sort by').selectOption('relevance');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForSelector('a[href="/console/catalog/apis/browser-weather"]');
    await check(page, 'catalog-search');

    await page.getByRole('link', { name: 'Browser Weather' }).click();
    await page.waitForSelector('text=Endpoints and prices');
    const listing = await page.textContent('main');
    expect(listing).toContain('/forecast');
    expect(listing).toContain('$0.08');
    expect(await page.locator('figure.chart svg[role=img]').count()).toBeGreaterThan(0);
    expect(await page.getByRole('link', { name: 'Read and accept the terms' }).count()).toBe(0);
    expect(await page.locator('a[href="/terms/browser-weather"]').count()).toBe(1);
    await check(page, 'catalog-listing');

    // The listing's facts link its category (issue 31: the storefront's listing page, here in the console's frame).
    await page.locator('table.facts a[href="/console/catalog/categories/weather"]').click();
    await page.waitForSelector('text=APIs in Weather');
    expect(await page.locator('a[href="/console/catalog/apis/browser-weather"]').count()).toBe(1);
    await check(page, 'catalog-category');

    await page.goto(`${s.base}/console/catalog/leaderboards/most_used`);
    await page.waitForSelector('a[href="/console/catalog/apis/browser-weather"]');
    await check(page, 'catalog-leaderboard');

    await page.goto(`${s.base}/console/catalog?q=cats&category=animals`);
    await page.waitForSelector('text=No API matches “cats”');
    await check(page, 'catalog-no-results');
  });
});
