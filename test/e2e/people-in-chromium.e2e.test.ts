// Issue 22's acceptance walks in Chromium against the real `npm start` (embedded defaults: PGlite, in-process
// counters, its own Temporal dev server, mail printed in the terminal), started the way the README tells a developer
// whose upstream runs on their own machine: `UPSTREAM_ALLOW_PRIVATE=true npm start`. Each walk starts at a page a
// person is sent to and then follows only the links and forms that person sees; codes are read from the mail the
// terminal shows. The upstream is a loopback HTTP server of this test; the OAuth client is this test too (dynamic
// registration, PKCE, a loopback redirect URI), doing over HTTP what an agent does.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHROMIUM,
  createApiFromConsole,
  failedNavigations,
  launchBrowser,
  publishUntilLive,
  signUpFromHome,
} from '../helpers/browser.js';
import {
  authorization,
  exchangeCode,
  registerClient,
  startRedirectReceiver,
  type RedirectReceiver,
} from '../helpers/oauth-client.js';
import { describe as show, http } from '../helpers/http.js';
import { codeMailedTo, startProcess, type RunningProcess } from '../helpers/processes.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { postInitialize } from '../helpers/mcp-eras.js';

describe.skipIf(!existsSync(CHROMIUM))('people in Chromium on `UPSTREAM_ALLOW_PRIVATE=true npm start`', () => {
  let dataDir: string;
  let proc: RunningProcess;
  let upstream: Upstream;
  let browser: Browser;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mp-people-'));
    upstream = await startUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ city: 'Bergen', forecast: 'rain', path: req.url }));
    });
    [proc, browser] = await Promise.all([
      startProcess({
        npmStart: true,
        embeddedTemporal: true,
        env: { DATA_DIR: dataDir, UPSTREAM_ALLOW_PRIVATE: 'true' },
        readyTimeoutMs: 180_000,
      }),
      launchBrowser(),
    ]);
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await proc?.stop('SIGTERM');
    await upstream?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  const mailedCode = (email: string, since: number) => () => codeMailedTo(proc, email, since);

  /** A new person in their own browser context: from `/`, "Create an account" and the mailed code, into the console. */
  async function newPerson(email: string, name: string): Promise<{ page: Page; failed: string[] }> {
    const page = await (await browser.newContext()).newPage();
    const failed = failedNavigations(page);
    await page.goto(`${proc.urls.api}/`);
    await signUpFromHome(page, { email, name }, mailedCode(email, proc.output().length));
    return { page, failed };
  }

  /** The names of the live keys of `email`'s org, read over the API with a session from a mailed sign-in code. */
  async function keyNames(email: string): Promise<string[]> {
    const since = proc.output().length;
    const asked = await http(proc.urls.api, 'POST', '/v1/auth/login/request', { body: { email } });
    expect(asked.status, show(asked)).toBe(200);
    const code = await codeMailedTo(proc, email, since);
    const session = await http(proc.urls.api, 'POST', '/v1/auth/login/verify', { body: { email, code } });
    expect(session.status, show(session)).toBe(200);
    const keys = await http(proc.urls.api, 'GET', '/v1/keys', { token: session.body.data.session_token });
    expect(keys.status, show(keys)).toBe(200);
    return (keys.body.data as { name: string; revoked_at: string | null }[])
      .filter((k) => !k.revoked_at && k.name.startsWith('OAuth: '))
      .map((k) => k.name)
      .sort();
  }

  it('a provider publishes an API from the console and sees its first call in analytics', async () => {
    // The provider: signs up, opens Provider, creates an API on the loopback upstream with a priced endpoint.
    const { page, failed } = await newPerson('fjord-provider@example.com', 'Fjord Forecasts');
    await page.getByRole('link', { name: 'Provider' }).first().click();
    await page.waitForSelector('text=You have no APIs yet');
    await createApiFromConsole(page, {
      name: 'Fjord Forecasts',
      slug: 'fjord-forecasts',
      summary: 'Rain or shine for every fjord',
      upstream: upstream.url,
      category: 'weather',
      endpoints: 'GET /forecast 0.05 Forecast for today',
    });

    // Verify (the smoke test calls the upstream for real), accept the terms, publish (the workflow runs).
    await page.getByRole('button', { name: 'Verify now' }).click();
    await page.waitForSelector('text=Verification finished');
    expect(await page.textContent('main')).toContain('Smoke test passed');
    expect(upstream.seen.length).toBeGreaterThan(0);
    await publishUntilLive(page);

    // A consumer (another person, in their own browser): signs up, finds the API in the catalog, reads its gateway
    // address on the listing, creates a key in Keys, and their program calls the endpoint with it.
    const consumer = await newPerson('fjord-consumer@example.com', 'Rainy Day Apps');
    const c = consumer.page;
    // The $1.00 starter credit of a proven sign-up (released by a workflow): on the overview once it arrived.
    await expect
      .poll(async () => (await c.getByRole('link', { name: 'Overview' }).first().click(), c.textContent('.cards')), {
        timeout: 20_000,
      })
      .toContain('$1.00');
    await c.getByRole('link', { name: 'Catalog' }).first().click();
    await c.getByLabel('Search', { exact: true }).fill('fjord forecasts');
    await c.getByRole('button', { name: 'Search' }).click();
    await c.getByRole('link', { name: 'Fjord Forecasts' }).click();
    await c.waitForSelector('text=Endpoints and prices');
    expect(await c.textContent('main')).toContain('$0.05');
    const gateway = /Gateway: (\S+)/.exec((await c.textContent('main')) ?? '')?.[1];
    expect(gateway).toBe(`${proc.urls.gateway}/v1/proxy/fjord-forecasts`);
    await c.getByRole('link', { name: 'Keys' }).first().click();
    await c.locator('#new-name').fill('rainy-day-app');
    await c.getByRole('button', { name: 'Create key' }).click();
    const key = await c.locator('#secret').inputValue();
    expect(key).toMatch(/^svc_live_/);

    const call = await fetch(`${gateway}/forecast`, { headers: { authorization: `Bearer ${key}` } });
    const body = await call.text();
    expect(call.status, body).toBe(200);
    expect(JSON.parse(body)).toMatchObject({
      ok: true,
      data: { city: 'Bergen', path: '/forecast' },
      meta: { cost_cents: 5 },
    });

    // The provider opens Analytics: the first call (successful, $0.05 of GMV) is counted.
    await page.getByRole('link', { name: 'Analytics' }).click();
    const figure = (label: string) =>
      page
        .locator('.cards .card', { has: page.getByText(label, { exact: true }) })
        .locator('.figure')
        .textContent();
    await expect
      .poll(async () => (await page.getByRole('button', { name: 'Show' }).click(), figure('Calls')), {
        timeout: 20_000,
      })
      .toBe('1');
    expect(await figure('Successful calls')).toBe('1');
    expect(await figure('GMV')).toBe('$0.05');
    const row = page.locator('table tbody tr', { has: page.getByRole('link', { name: 'fjord-forecasts' }) });
    expect((await row.locator('td').allTextContents()).map((t) => t.trim())).toEqual([
      'fjord-forecasts',
      '1',
      '1',
      '$0.05',
    ]);
    expect([...failed, ...consumer.failed]).toEqual([]);
  }, 120_000);

  it('two OAuth approvals in a row in one browser each deliver a code; "not you?" goes back to the email step', async () => {
    const issuer = proc.urls.api;
    const resource = `${proc.urls.mcp}/mcp`;
    const receiver: RedirectReceiver = await startRedirectReceiver();
    try {
      const clients = {
        notes: { clientId: await registerClient(issuer, 'Notes Agent', receiver.url), redirectUri: receiver.url },
        travel: { clientId: await registerClient(issuer, 'Travel Agent', receiver.url), redirectUri: receiver.url },
      };
      const context = await browser.newContext();
      const page = await context.newPage();
      const failed = failedNavigations(page);

      /** The email step and the mailed code: the consent page names the address. */
      const proveEmail = async (address: string) => {
        const since = proc.output().length;
        await page.getByLabel('Email').fill(address);
        await page.getByRole('button', { name: 'Email me a code' }).click();
        await page.getByLabel('Code').fill(await codeMailedTo(proc, address, since));
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.getByRole('button', { name: 'Approve' }).waitFor();
        expect(await page.textContent('body')).toContain(`as ${address}`);
      };

      /**
       * The client sends the person to its authorize URL; the person proves `email` with the mailed code (or first
       * `switchTo` another address with "Not you?") and approves; the code reaches the client, which exchanges it.
       */
      const connect = async (client: keyof typeof clients, email: string, switchTo?: string) => {
        const c = { ...clients[client], resource };
        const auth = authorization(issuer, c);
        const before = receiver.seen.length;
        await page.goto(auth.url);
        expect(await page.textContent('body')).toContain(client === 'notes' ? 'Notes Agent' : 'Travel Agent');
        await proveEmail(email);
        if (switchTo) {
          // Signed in as the wrong address: "Not you?" leads back to the email step of this same request.
          await page.getByRole('link', { name: /Not you\?/ }).click();
          await page.getByRole('button', { name: 'Email me a code' }).waitFor();
          await proveEmail(switchTo);
        }
        await page.getByRole('button', { name: 'Approve' }).click();
        const back = await receiver.next(before);
        expect(back.searchParams.get('error'), back.toString()).toBeNull();
        expect(back.searchParams.get('state'), back.toString()).toBe(auth.state);
        expect(back.searchParams.get('iss')).toBe(issuer);
        const token = await exchangeCode(issuer, {
          ...c,
          code: back.searchParams.get('code')!,
          verifier: auth.verifier,
        });
        expect(token.status, JSON.stringify(token.body)).toBe(200);
        expect(token.body.access_token).toBeTruthy();
        return token.body.access_token!;
      };

      const tokens = [
        await connect('notes', 'oauth-person@example.com'),
        await connect('travel', 'oauth-person@example.com'),
        await connect('notes', 'oauth-person@example.com'), // a reconnect of the first client
        await connect('travel', 'wrong-person@example.com', 'oauth-person@example.com'),
      ];
      expect(new Set(tokens).size).toBe(4);
      // Each token works at the agent-tool server.
      for (const token of tokens) {
        const res = await postInitialize(proc.urls.mcp, token);
        expect(res.status, res.text).toBe(200);
      }
      expect(failed).toEqual([]);
      await context.close();

      // Every approval minted its key for the address proven last: four for the person, none for the wrong address.
      expect(await keyNames('oauth-person@example.com')).toEqual([
        'OAuth: Notes Agent',
        'OAuth: Notes Agent',
        'OAuth: Travel Agent',
        'OAuth: Travel Agent',
      ]);
      expect(await keyNames('wrong-person@example.com')).toEqual([]);
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
