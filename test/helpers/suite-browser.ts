/** One headless Chromium for the tests of a describe block: launched before them, closed after them. */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchBrowser } from './browser.js';

/** Call inside the describe block; the returned function gives its browser once launched. */
export function suiteBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => browser!;
}
