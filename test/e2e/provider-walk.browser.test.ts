// Issue 31's acceptance, the provider half, in Chromium on the real `UPSTREAM_ALLOW_PRIVATE=true npm start` (embedded
// defaults on a fresh data directory, its own Temporal dev server, mail printed in the terminal) with a loopback
// upstream of this test. A provider signs up from the home page (following links and forms only, the mailed code read
// from npm start's output), creates an API in the console WITH A MISTAKE (a path the upstream answers 404 to), so
// verifying fails and the page says "Verification failed" naming host:port; fixes the endpoint in the console (its
// path, and a query parameter with an example), verifies, publishes; adds an endpoint to the live API (a revision,
// published through the workflow); removes one (no call in 30 days: at once, so the gateway answers 410
// endpoint_removed); an installed agent tool of this console-made API takes a parameter (the MCP SDK's client on the
// same npm start: add_api_tools, then a call with a query argument that reaches the upstream); then unpublishes and
// archives the API (its JSON URL and the gateway answer 410 api_archived; My APIs lists it apart). axe-core runs on
// every page the provider sees (no serious or critical violation); screenshots go to test-results/provider-walk/.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Browser, Page } from 'playwright-core';
import { expectAxeClean } from '../helpers/axe.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHROMIUM,
  createApiFromConsole,
  failedNavigations,
  launchBrowser,
  publishUntilLive,
  signUpFromHome,
} from '../helpers/browser.js';
import { ROOT } from '../helpers/env.js';
import { describe as show, expectFailure, http } from '../helpers/http.js';
import { codeMailedTo, startProcess, type RunningProcess } from '../helpers/processes.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

const SHOTS = path.join(ROOT, 'test-results', 'provider-walk');
const SLUG = 'harbour-weather';
const KNOWN = ['/v1/forecast', '/v1/alerts'];

describe.skipIf(!existsSync(CHROMIUM))('a provider in Chromium on `UPSTREAM_ALLOW_PRIVATE=true npm start`', () => {
  let dataDir: string;
  let proc: RunningProcess;
  let upstream: Upstream;
  let browser: Browser;
  let page: Page;
  let failed: string[];
  let consumerKey: string;

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mp-provider-walk-'));
    // Answers only the paths it knows: anything else is a 404, as a real upstream would.
    upstream = await startUpstream((req, res) => {
      const known = KNOWN.includes(new URL(req.url ?? '/', 'http://x').pathname);
      res.writeHead(known ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(known ? { forecast: 'rain', url: req.url } : { error: 'no such path' }));
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
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    failed = failedNavigations(page);
    const reg = await http(proc.urls.api, 'POST', '/v1/register');
    expect(reg.status, show(reg)).toBe(201);
    consumerKey = (reg.body.data as { api_key: string }).api_key;
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await proc?.stop('SIGTERM');
    await upstream?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  /** Screenshot the page and run axe-core on it: no violation at all. */
  const check = (name: string) => expectAxeClean(page, name, SHOTS);

  const main = async () => (await page.textContent('main')) ?? '';
  const gateway = (p: string) => http(proc.urls.gateway, 'GET', `/v1/proxy/${SLUG}${p}`, { token: consumerKey });

  /** Tick the terms in the revision box, "Publish revision", and refresh until no revision is open. */
  async function publishRevision(): Promise<void> {
    await page.getByLabel('I accept the provider terms of this marketplace').check();
    await page.getByRole('button', { name: 'Publish revision' }).click();
    await page.waitForSelector('text=/Revision published|The workflow is still running/');
    await expect
      .poll(async () => (await page.getByRole('link', { name: 'Refresh status' }).click(), main()), {
        timeout: 30_000,
      })
      .toContain('No open revision');
  }

  it('signs up from the home page and creates an API with a mistake: verification fails, naming host:port', async () => {
    await page.goto(`${proc.urls.api}/`);
    await check('home');
    const email = 'harbour-provider@example.com';
    const since = proc.output().length;
    await signUpFromHome(page, { email, name: 'Harbour Weather' }, () => codeMailedTo(proc, email, since));
    await page.getByRole('link', { name: 'Provider' }).first().click();
    await page.waitForSelector('text=You have no APIs yet');
    await check('provider-empty');

    // The mistake: /v1/forecst, which the upstream answers 404 to.
    await createApiFromConsole(page, {
      name: 'Harbour Weather',
      slug: SLUG,
      summary: 'Forecasts for harbours',
      upstream: upstream.url,
      category: 'weather',
      endpoints: 'GET /v1/forecst Forecast for a harbour',
    });
    await check('api-draft');
    await page.getByRole('button', { name: 'Verify now' }).click();
    const banner = page.locator('.banner.bad');
    await banner.waitFor();
    expect(await banner.textContent()).toContain(
      `Verification failed at 127.0.0.1:${upstream.port}: GET /v1/forecst: upstream answered HTTP 404.`,
    );
    expect(await banner.locator('strong').first().textContent()).toBe('Verification failed');
    expect(await main()).not.toContain('Verification finished');
    await check('verify-failed');
  }, 180_000);

  it('fixes the endpoint in the console (path and a query parameter), verifies and publishes', async () => {
    await page.getByRole('link', { name: 'Edit GET /v1/forecst' }).click();
    await page.waitForSelector('h1:has-text("Edit GET /v1/forecst")');
    await check('editor');
    await page.getByLabel('Path', { exact: true }).fill('/v1/forecast');
    await page.getByLabel('Parameter 1 name').fill('harbour');
    await page.getByLabel('Parameter 1 place').selectOption('query');
    await page.getByLabel('Parameter 1 type').selectOption('string');
    await page.getByLabel('Parameter 1 required').check();
    await page.getByLabel('Parameter 1 description').fill('The harbour’s name');
    await page.getByLabel('Parameter 1 example').fill('Bergen');
    await page.getByRole('button', { name: 'Save endpoint' }).click();
    await page.waitForSelector('text=Method or path changed: that is a removal of the old endpoint plus an addition');
    expect(await main()).toContain('query: harbour');
    await check('endpoint-fixed');

    await page.getByRole('button', { name: 'Verify now' }).click();
    await page.waitForSelector('text=Verification finished');
    expect(await main()).toContain('Smoke test passed');
    await publishUntilLive(page);
    await check('api-live');
    expect((await gateway('/v1/forecast?harbour=Bergen')).status).toBe(200);
  }, 120_000);

  it('adds an endpoint to the live API: a revision, published through the workflow', async () => {
    await page.getByRole('link', { name: 'Add an endpoint' }).click();
    await page.getByLabel('Path', { exact: true }).fill('/v1/alerts');
    await page.getByLabel('Summary (optional)').fill('Storm alerts');
    await check('editor-new');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.waitForSelector('text=Endpoint added to the open revision');
    expect(await main()).toMatch(/Revision 1, opened[\s\S]*Added\s*GET \/v1\/alerts Storm alerts/);
    await check('revision-open');
    const before = await http(proc.urls.api, 'GET', `/v1/apis/${SLUG}/endpoints`);
    expect((before.body.data as { path: string }[]).map((e) => e.path)).toEqual(['/v1/forecast']);

    await publishRevision();
    await check('revision-published');
    const after = await http(proc.urls.api, 'GET', `/v1/apis/${SLUG}/endpoints`);
    expect((after.body.data as { path: string }[]).map((e) => e.path).sort()).toEqual(['/v1/alerts', '/v1/forecast']);
  }, 120_000);

  it('removes an endpoint with no calls: confirmed, published, then the gateway answers 410 endpoint_removed', async () => {
    await page.getByRole('link', { name: 'Remove GET /v1/alerts' }).click();
    await page.waitForSelector('h1:has-text("Remove GET /v1/alerts?")');
    expect(await main()).toContain(
      'it takes effect at once when the revision is published (no call in the last 30 days): its calls then answer 410 endpoint_removed',
    );
    await check('remove-confirm');
    await page.getByRole('button', { name: 'Remove GET /v1/alerts' }).click();
    await page.waitForSelector('text=Removal staged in the open revision');
    await check('removal-staged');
    await publishRevision();
    expectFailure(await gateway('/v1/alerts'), 410, 'endpoint_removed');
    expect(await main()).toMatch(/Removed endpoints[\s\S]*\/v1\/alerts\s*410 endpoint_removed since \d{4}-\d{2}-\d{2}/);
    await check('endpoint-removed');
  }, 120_000);

  it('an installed agent tool of the console-made API takes its query parameter (MCP SDK client)', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${proc.urls.mcp}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${consumerKey}` } },
    });
    const client = new Client({ name: 'provider-walk', version: '1.0.0' });
    await client.connect(transport);
    try {
      const added = (await client.callTool({ name: 'add_api_tools', arguments: { slug: SLUG } })) as CallToolResult;
      expect(added.isError, JSON.stringify(added.content)).toBeFalsy();
      const names = (added.structuredContent as { added: string[] }).added;
      expect(names).toHaveLength(1);
      const tools = await client.listTools();
      const tool = tools.tools.find((t) => t.name === names[0])!;
      expect(tool.inputSchema.properties).toHaveProperty('harbour');
      expect(tool.inputSchema.required).toContain('harbour');
      const seen = upstream.seen.length;
      const result = (await client.callTool({ name: tool.name, arguments: { harbour: 'Ålesund' } })) as CallToolResult;
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ status: 200 });
      const received = upstream.seen.slice(seen).map((r) => new URL(r.url, 'http://x'));
      expect(received.map((u) => [u.pathname, u.searchParams.get('harbour')])).toEqual([['/v1/forecast', 'Ålesund']]);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('unpublishes and archives the API: its URLs answer 410 api_archived, My APIs lists it apart', async () => {
    expect(await main()).toContain('To retire this API, unpublish it first');
    await page.getByRole('button', { name: 'Unpublish' }).click();
    await page.waitForSelector('text=/Unpublished: the API is a draft again|The workflow is still running/');
    await expect
      .poll(async () => (await page.getByRole('link', { name: 'Refresh status' }).click(), main()), {
        timeout: 30_000,
      })
      .toContain('Archive…');
    await page.getByRole('link', { name: 'Archive…' }).click();
    expect(await main()).toContain('answer 410 api_archived. Its history stays');
    await check('archive-confirm');
    await page.getByRole('button', { name: 'Archive Harbour Weather' }).click();
    await page.waitForSelector('text=Archived: the API is out of the catalog');
    await check('archived');

    expectFailure(await http(proc.urls.api, 'GET', `/v1/apis/${SLUG}`), 410, 'api_archived');
    expectFailure(await gateway('/v1/forecast?harbour=Bergen'), 410, 'api_archived');
    // Its storefront page says it is gone (410), and it left the storefront's search.
    const gone = await page.context().newPage();
    const answer = await gone.goto(`${proc.urls.api}/apis/${SLUG}`);
    expect(answer?.status()).toBe(410);
    expect(await gone.locator('main').textContent()).toContain('archived');
    await gone.goto(`${proc.urls.api}/apis?q=${encodeURIComponent('Harbour Weather')}`);
    expect(await gone.locator(`a[href="/apis/${SLUG}"]`).count()).toBe(0);
    await gone.close();

    await page.getByRole('link', { name: 'My APIs' }).first().click();
    await page.waitForSelector('h2:has-text("Archived APIs")');
    const archived = page.locator('section', { has: page.locator('#archived-h') });
    expect(await archived.textContent()).toContain('Harbour Weather');
    expect(await page.locator('section', { has: page.locator('#apis-h') }).textContent()).toContain(
      'All your APIs are archived',
    );
    await check('my-apis-archived');
    expect(failed).toEqual([]);
  }, 120_000);
  it('the books reconcile: `npm run admin -- reconcile`, handed to the running npm start, exits 0', async () => {
    const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'TEMPORAL_ADDRESS']) delete env[name];
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'admin', '--', 'reconcile'], {
      cwd: ROOT,
      env,
      timeout: 90_000,
    });
    expect(JSON.parse(stdout)).toMatchObject({ ok: true });
  }, 120_000);
});
