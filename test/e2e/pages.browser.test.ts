// The human steps in headless Chromium against the real all-in-one process (real Postgres, Redis, Temporal and an
// SMTP capture): signup -> the mailed link -> the /verify-email page; and /login, where the test types the code.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, sql, type TestDatabase } from '../helpers/db.js';
import { codeFromMail } from '../helpers/full-stack.js';
import { launchBrowser } from '../helpers/browser.js';
import { http, describe as show } from '../helpers/http.js';
import { processEnv, startProcess, type RunningProcess } from '../helpers/processes.js';
import { startSmtpCapture, type SmtpCapture } from '../helpers/smtp.js';
import { startTemporal } from '../helpers/temporal.js';

describe('pages in a browser, against the real processes', () => {
  let db: TestDatabase;
  let temporal: { env: TestWorkflowEnvironment; address: string };
  let smtp: SmtpCapture;
  let proc: RunningProcess;
  let browser: Browser;

  beforeAll(async () => {
    [db, temporal, smtp] = await Promise.all([
      createTestDatabase({ empty: true }),
      startTemporal(),
      startSmtpCapture(),
    ]);
    proc = await startProcess({
      roles: ['all'],
      env: processEnv(db.url, temporal.address, { SMTP_URL: smtp.url }),
    });
    browser = await launchBrowser();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await proc?.stop();
    await temporal?.env.teardown();
    await smtp?.close();
    await db?.drop();
  });

  it('signup, then the mailed link verifies the email: the same key gains billing and provider scopes and 100 usable cents', async () => {
    const email = 'grace@example.com';
    const signup = await http(proc.urls.api, 'POST', '/v1/signup', { body: { email, name: 'Grace' } });
    expect(signup.status, show(signup)).toBe(201);
    const key = signup.body.data.api_key as string;
    const before = await http(proc.urls.api, 'GET', '/v1/me', { token: key });
    expect(before.body.data).toMatchObject({ credit_cents: 0, withheld_credit_cents: 100 });
    expect(before.body.data.scopes).not.toContain('billing:write');

    const mail = await smtp.waitForMail(email, { subject: /Verify/ });
    const link = /^(http:\/\/\S+\/verify-email\?token=\S+)$/m.exec(mail.text)?.[1];
    expect(link).toBeDefined();
    expect(link!.startsWith(`${proc.urls.api}/verify-email?token=`)).toBe(true);

    const page = await browser.newPage();
    await page.goto(link!);
    await expect.poll(() => page.title()).toContain('Verify your email');
    await page.getByRole('button', { name: 'Verify my email' }).click();
    await page.waitForSelector('text=is verified');
    expect(await page.textContent('[role=status]')).toContain(email);
    expect(await page.textContent('body')).toContain('$1.00');
    await page.close();

    const after = await http(proc.urls.api, 'GET', '/v1/me', { token: key });
    expect(after.body.data.scopes).toEqual(expect.arrayContaining(['billing:write', 'provider:write']));
    expect(after.body.data).toMatchObject({ credit_cents: 100, withheld_credit_cents: 0 });
    const [books] = await sql<{ credit: string; sum: string }>(
      db.url,
      'select o.credit_cents as credit, (select sum(amount_cents) from ledger_entries l where l.org_id = o.id) as sum from orgs o where o.id = $1',
      [signup.body.data.account.org_id],
    );
    expect(books).toEqual({ credit: '100', sum: '100' });
  });

  it('/login: the person types the emailed code and is signed in with a session cookie', async () => {
    const email = 'linus@example.com';
    expect((await http(proc.urls.api, 'POST', '/v1/signup', { body: { email } })).status).toBe(201);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${proc.urls.api}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Email me a code' }).click();
    await page.waitForSelector('text=6-digit code');

    const before = smtp.messages.length;
    await expect
      .poll(() =>
        smtp.messages
          .slice(before)
          .concat(smtp.messages)
          .find((m) => m.to.includes(email) && /sign-in code/.test(m.subject)),
      )
      .toBeTruthy();
    const code = codeFromMail(smtp.messages.find((m) => m.to.includes(email) && /sign-in code/.test(m.subject))!.text);

    // A wrong code first: the page says so and keeps the form.
    await page.getByLabel('Code').fill(code === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('[role=alert]');
    expect(await page.textContent('[role=alert]')).toMatch(/not valid/);

    await page.getByLabel('Code').fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Signed in without a `next`: the console's overview, not a dead end (issue 22).
    await page.waitForURL(`${proc.urls.api}/console`);
    await expect.poll(() => page.title()).toContain('Overview');

    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'svc_session');
    expect(session?.value).toMatch(/^sess_/);
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Lax');

    // The cookie is for the pages only: the JSON API takes `Authorization: Bearer` and ignores it.
    const me = await page.goto(`${proc.urls.api}/v1/me`);
    expect(me!.status()).toBe(401);
    const bearer = await fetch(`${proc.urls.api}/v1/me`, { headers: { authorization: `Bearer ${session!.value}` } });
    const body = (await bearer.json()) as { data: { credential: { type: string }; user: { email: string } } };
    expect(body.data.credential.type).toBe('session');
    expect(body.data.user.email).toBe(email);

    await page.goto(`${proc.urls.api}/login`);
    await context.close();
  });
});
