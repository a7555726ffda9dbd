// The first command on a fresh clone: `npm start` with no node_modules installs what it needs itself (the shared
// ensure-deps step), then runs the whole marketplace on embedded defaults; a browser opening the control plane's
// `/` gets a page saying what this is. The copy gets this checkout's files as git sees them (tracked and new, not
// ignored) and the already built Go tools (their build has its own test in tools-script.test.ts).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/env.js';
import { CHROMIUM, launchBrowser, signUpFromHome } from '../helpers/browser.js';
import { waitFor } from '../helpers/ports.js';
import { codeMailedTo, startProcess, stopAndRemove, type RunningProcess } from '../helpers/processes.js';

const run = promisify(execFile);

async function freshCopy(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mp-clone-'));
  const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  for (const file of stdout.split('\0').filter(Boolean)) {
    const from = path.join(ROOT, file);
    if (!(await stat(from).catch(() => undefined))?.isFile()) continue; // deleted in the working tree
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await copyFile(from, path.join(dir, file));
  }
  await symlink(path.join(ROOT, '.tools'), path.join(dir, '.tools'));
  return dir;
}

/** A user's PATH: without the node_modules/.bin of the checkout running this test (npx put it there). */
function userPath(): string {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((p) => !p.includes('node_modules'))
    .join(path.delimiter);
}

describe('npm start on a fresh clone', () => {
  let dir: string;
  let proc: RunningProcess;

  beforeAll(async () => {
    dir = await freshCopy();
    await expect(stat(path.join(dir, 'node_modules'))).rejects.toThrow();
    proc = await startProcess({
      npmStart: true,
      cwd: dir,
      embeddedTemporal: true,
      env: {
        // A user's PATH: without the node_modules/.bin of the checkout running this test (npx put it there).
        PATH: userPath(),
        // The npm cache `npm test` filled serves the packages; the network is used only for what it lacks.
        npm_config_prefer_offline: 'true',
      },
      readyTimeoutMs: 300_000,
    });
  }, 360_000);
  afterAll(() => stopAndRemove(proc, dir), 60_000);

  it('installs the npm dependencies itself, saying so, then starts everything', async () => {
    const out = proc.output();
    expect(out).toContain('Installing npm dependencies with npm ci (first run: no node_modules yet;');
    expect(out.indexOf('Installing npm dependencies')).toBeLessThan(out.indexOf('Marketplace is running'));
    expect(out).not.toMatch(/not found/);
    const lock = await readFile(path.join(dir, 'package-lock.json'));
    expect((await readFile(path.join(dir, 'node_modules', '.ci-stamp'), 'utf8')).trim()).toBe(
      createHash('sha256').update(lock).digest('hex'),
    );
    const health = await fetch(`${proc.urls.api}/health`);
    expect(health.status).toBe(200);
  });

  it('answers a browser on the control plane root with a page that links to sign-in, the docs and the Temporal UI', async () => {
    const res = await fetch(`${proc.urls.api}/`, { headers: { accept: 'text/html,*/*;q=0.8' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await res.text();
    expect(html).toContain('href="/login"');
    expect(html).toContain('href="/docs/spec.md"');
    expect(html).toContain(`href="http://localhost:${new URL(proc.urls.temporalUi!).port}/`);
  });

  it('buys a credit pack on the embedded payments: checkout, the test page, the signed event, the balance', async () => {
    const api = proc.urls.api;
    const json = (res: Response) => res.json() as Promise<{ ok: boolean; data: Record<string, unknown> }>;
    const signup = await json(
      await fetch(`${api}/v1/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'first-hour@example.com', name: 'First Hour' }),
      }),
    );
    expect(signup.ok).toBe(true);
    const key = signup.data.api_key as string;
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    // The mail goes to the log in this mode: its verification link is there.
    const token = await waitFor(
      () => Promise.resolve(/verify-email\?token=([A-Za-z0-9_-]+)/.exec(proc.output())?.[1]),
      { timeoutMs: 10_000, what: 'the verification mail in the log' },
    );
    const verified = await fetch(`${api}/v1/auth/verify-email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    expect(verified.status).toBe(200);

    const checkout = await fetch(`${api}/v1/billing/checkout`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ pack: 'starter' }),
    });
    const body = await json(checkout);
    expect(checkout.status, JSON.stringify(body)).toBeLessThan(300);
    const url = body.data.checkout_url as string;
    expect(url.startsWith(`${api}/embedded-payments/checkout/`)).toBe(true);

    const before = (await json(await fetch(`${api}/v1/billing/balance`, { headers: auth }))).data;
    const page = await fetch(url);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Pay $5.00');
    const cookie = page.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const action = /<form method="post" action="([^"]+)"/.exec(html)![1]!.replaceAll('&amp;', '&');
    /** Pays the checkout page (its form, as the browser posts it). */
    const pay = () =>
      fetch(`${api}${action}`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf }).toString(),
        redirect: 'manual',
      });
    const paid = await pay();
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toMatch(/\/billing\/return\?status=success&session_id=cs_/);

    const after = (await json(await fetch(`${api}/v1/billing/balance`, { headers: auth }))).data;
    expect((after.credit_cents as number) - (before.credit_cents as number)).toBe(500);
    // Paying the same page again is the same event: credited once.
    const again = await pay();
    expect(again.status).toBe(303);
    const final = (await json(await fetch(`${api}/v1/billing/balance`, { headers: auth }))).data;
    expect(final.credit_cents).toBe(after.credit_cents);
  });

  // Needs Chromium (test/helpers/browser.ts); a machine without it skips this one visibly.
  it.skipIf(!existsSync(CHROMIUM))(
    'a person signs up from the home page, lands in the console and buys a pack on the embedded payments',
    async () => {
      const api = proc.urls.api;
      const browser = await launchBrowser();
      try {
        const page = await browser.newPage();
        await page.goto(`${api}/`);
        // npm start prints mail to the terminal: the person reads the code there.
        const email = 'browser-person@example.com';
        const since = proc.output().length;
        await signUpFromHome(page, { email, name: 'Browser Person' }, () => codeMailedTo(proc, email, since));
        await page.waitForURL(`${api}/console`);
        await expect.poll(() => page.title()).toContain('Overview');

        await page.getByRole('link', { name: 'Billing' }).first().click();
        await page.getByRole('button', { name: /Buy starter/ }).click();
        await page.waitForURL(/\/embedded-payments\/checkout\//);
        await page.getByRole('button', { name: 'Pay $5.00' }).click();
        await page.waitForURL(/\/console\/billing\?done=checkout/);
        // $5.00 bought and the $1.00 starter credit (released when the code proved the address).
        await expect
          .poll(async () => (await page.reload(), await page.textContent('.cards')), { timeout: 15_000 })
          .toContain('$6.00');

        // A capped key for an agent, from the Keys section: its secret is shown once.
        await page.getByRole('link', { name: 'Keys' }).first().click();
        await page.locator('#new-name').fill('agent');
        await page.locator('#new-budget').fill('2.50');
        await page.getByRole('button', { name: 'Create key' }).click();
        expect(await page.locator('#secret').inputValue()).toMatch(/^svc_live_/);
        await page.getByRole('link', { name: 'Keys' }).first().click();
        expect(await page.textContent('main')).toContain('$2.50');

        // The operator imports a directory while it runs (issue 22 item 4); the person searches the catalog:
        // "callable only" leaves the directory entry out, and the entry's page says it is not callable here.
        const file = path.join(dir, 'tiny-directory.json');
        await writeFile(
          file,
          JSON.stringify([
            {
              name: 'Fjord Weather Almanac',
              url: 'https://fjord-weather.example.org/',
              description: 'Weather forecasts for the fjords of Norway',
              category: 'Weather',
              auth: '',
              https: true,
              cors: 'yes',
            },
          ]),
        );
        await run('npm', ['run', '--silent', 'catalog:import', '--', file], {
          cwd: dir,
          env: { PATH: userPath(), HOME: process.env.HOME ?? dir },
          timeout: 120_000,
        });
        await page.getByRole('link', { name: 'Catalog' }).first().click();
        await page.locator('#q').fill('fjord weather');
        await page.getByRole('button', { name: 'Search' }).click();
        const entry = page.getByRole('link', { name: 'Fjord Weather Almanac' });
        await entry.waitFor();
        await page.getByLabel('Callable only').check();
        await page.getByRole('button', { name: 'Search' }).click();
        await page.waitForURL(/callable=true/);
        expect(await entry.count()).toBe(0);
        await page.getByLabel('Callable only').uncheck();
        await page.getByRole('button', { name: 'Search' }).click();
        await entry.click();
        await page.waitForURL(/\/console\/catalog\/apis\//);
        expect(await page.textContent('main')).toContain('Directory entry: not callable here');
      } finally {
        await browser.close();
      }
    },
  );

  it('stops gracefully on SIGTERM (one Node process behind npm, no tsx CLI in between)', async () => {
    await proc.stop('SIGTERM');
    expect(proc.output()).toContain('"msg":"stopped"');
  });
});
