/** Headless Debian Chromium driven by playwright-core (no browser download), and the steps every walk shares. */
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM = '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A person on the home page (`/`) creates an account: "Create an account", their email and name, the 6-digit code
 * from the mail (`mailedCode` reads it where the person would), "Create my account"; they land in the console.
 */
export async function signUpFromHome(
  page: Page,
  person: { email: string; name: string },
  mailedCode: () => Promise<string>,
): Promise<void> {
  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel(/Your name/).fill(person.name);
  await page.getByRole('button', { name: 'Email me a code' }).click();
  await page.waitForSelector('text=We sent a 6-digit code');
  await page.getByLabel('Code').fill(await mailedCode());
  await page.getByRole('button', { name: 'Create my account' }).click();
  await page.waitForURL(/\/console$/);
}

/**
 * Every page the browser was sent to (main frame) that answered 4xx or 5xx, as `status url`: a walk that follows only
 * what a person sees must reach no dead route.
 */
export function failedNavigations(page: Page): string[] {
  const failed: string[] = [];
  page.on('response', (res) => {
    if (res.request().isNavigationRequest() && res.frame() === page.mainFrame() && res.status() >= 400) {
      failed.push(`${res.status()} ${res.url()}`);
    }
  });
  return failed;
}

/**
 * On a provider's API page after a passed smoke test: accept the provider terms, publish, and refresh until the
 * status badge says `live` (the page answers once the workflow finished, or says it runs).
 */
export async function publishUntilLive(page: Page): Promise<void> {
  await page.getByLabel('I accept the provider terms of this marketplace').check();
  await page.getByRole('button', { name: 'Publish', exact: true }).click();
  await page.waitForSelector('text=/Published: the API is live|The workflow is still running/');
  await expect
    .poll(
      async () => {
        await page.getByRole('link', { name: 'Refresh status' }).click();
        return page.locator('.card .figure .badge').first().textContent();
      },
      { timeout: 30_000 },
    )
    .toBe('live');
}

/** On the provider console: fill the new-API form and create it as a draft. `endpoints`: one `METHOD /path [price] [summary]` per line. */
export async function createApiFromConsole(
  page: Page,
  api: { name: string; slug: string; summary: string; upstream: string; category: string; endpoints: string },
): Promise<void> {
  await page.getByLabel('Name', { exact: true }).fill(api.name);
  await page.getByLabel(/^Slug/).fill(api.slug);
  await page.getByLabel('Summary', { exact: true }).fill(api.summary);
  await page.getByLabel('Upstream base URL').fill(api.upstream);
  await page.getByLabel('Category').selectOption(api.category);
  await page.getByLabel(/^Endpoints, one per line/).fill(api.endpoints);
  await page.getByRole('button', { name: 'Create API' }).click();
  await page.waitForSelector('text=API created as a draft');
}
