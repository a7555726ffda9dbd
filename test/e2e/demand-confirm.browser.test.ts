// The demand board's confirmation page (issue 31, section 8) in headless Chromium: the person opens the mailed link,
// reads the request, presses Confirm (a plain form post: no JavaScript needed), and both pages pass axe-core with no
// serious or critical violation.
import type { Browser, Page } from 'playwright-core';
import { expectAxeClean } from '../helpers/axe.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerson } from '../helpers/accounts.js';
import { launchBrowser } from '../helpers/browser.js';
import { sql } from '../helpers/db.js';
import { startFullStack, type FullStack } from '../helpers/full-stack.js';
import { describe as show, http } from '../helpers/http.js';

const axeClean = (page: Page, name: string) => expectAxeClean(page, name);

describe('demand confirmation page in a browser', () => {
  let s: FullStack;
  let browser: Browser;

  beforeAll(async () => {
    s = await startFullStack({ schedules: false });
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it('the mailed link shows the request; Confirm confirms; both pages are accessible', async () => {
    const requester = await createPerson(s.services);
    const address = 'reader@elsewhere.test';
    const res = await http(s.base, 'POST', '/v1/api-requests', {
      token: requester.apiKey,
      body: { query: 'Lighthouse keeper logbooks', email: address },
    });
    expect(res.status, show(res)).toBe(201);
    const mail = await s.smtp.waitForMail(address, { subject: /Confirm your email/ });
    const token = /\/api-requests\/confirm\?token=([0-9A-Za-z]{43})/.exec(mail.text)?.[1];
    expect(token).toBeDefined();

    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${s.base}/api-requests/confirm?token=${token}`);
    expect(await page.title()).toContain('Confirm your email');
    expect(await page.textContent('blockquote')).toContain('Lighthouse keeper logbooks');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForSelector('text=is confirmed for this request');
    expect(await page.textContent('[role=status]')).toContain(address);
    const [row] = await sql<{ confirmed: Date | null }>(
      s.db.url,
      'select email_confirmed_at as confirmed from api_request_votes where email = $1',
      [address],
    );
    expect(row!.confirmed).not.toBeNull();
    await context.close();

    // axe needs script: the same two pages with JavaScript on.
    const checked = await browser.newPage();
    await checked.goto(`${s.base}/api-requests/confirm?token=${token}`);
    await axeClean(checked, 'confirmed');
    const other = await http(s.base, 'POST', '/v1/api-requests', {
      token: requester.apiKey,
      body: { query: 'Tidal stream atlas', email: 'second-reader@elsewhere.test' },
    });
    expect(other.status, show(other)).toBe(201);
    const second = await s.smtp.waitForMail('second-reader@elsewhere.test', { subject: /Confirm your email/ });
    const secondToken = /\/api-requests\/confirm\?token=([0-9A-Za-z]{43})/.exec(second.text)?.[1];
    await checked.goto(`${s.base}/api-requests/confirm?token=${secondToken}`);
    await axeClean(checked, 'confirm form');
    await checked.close();
  });
});
