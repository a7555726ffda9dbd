// The served OpenAPI document and reference: every route the control plane's routers register is declared (a
// `route()` declares itself; a page or OAuth route is in its file's `documented` list) and nothing else is claimed
// for the control plane, `GET /v1/openapi.json` serves it raw, and `/docs` renders it
// with swagger-ui from our own assets under a CSP that allows `script-src 'self'` for that page only.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRouters, createApiApp } from '../../../api/app.js';
import { buildOpenApiDocument } from '../../../api/openapi/document.js';
import { allOperations, isUndocumented } from '../../../api/openapi/operations.js';
import { referenceCsp } from '../../../api/openapi/openapi.routes.js';
import { PAGE_CSP } from '../../../api/pages/layout.js';
import { startHttpServer, type RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { createLogger } from '../../../core/logger.js';
import { freePort } from '../../helpers/ports.js';
import { CHROMIUM } from '../../helpers/browser.js';
import { suiteBrowser } from '../../helpers/suite-browser.js';
import { expectFailure, http, describe as show } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

/** koa-router's `:param` form to OpenAPI's `{param}`. */
const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe('OpenAPI document: served, complete, browsable', () => {
  let stack: TestStack;
  let server: RunningHttpServer;

  // Served where PUBLIC_BASE_URL says, so the reference's "Try it out" reaches this very server (issue 22).
  const GATEWAY = 'http://127.0.0.1:9';
  beforeAll(async () => {
    const port = await freePort();
    stack = await createTestStack({ env: { PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, GATEWAY_URL: GATEWAY } });
    server = await startHttpServer({
      name: 'test',
      host: '127.0.0.1',
      port,
      handler: createApiApp(stack.services).callback(),
      logger: createLogger({ level: 'silent' }),
      graceMs: 2_000,
    });
  });
  const servers = () => ({ baseUrl: server.url, gatewayUrl: GATEWAY });
  afterAll(async () => {
    await server?.close();
    await stack?.close();
  });

  it('documents exactly the routes the control plane registers', () => {
    const registered = new Set<string>();
    for (const router of apiRouters(stack.services)) {
      for (const layer of router.stack) {
        for (const method of layer.methods) {
          if (method !== 'HEAD' && !isUndocumented(String(layer.path))) {
            registered.add(`${method} ${openApiPath(String(layer.path))}`);
          }
        }
      }
    }
    const documented = allOperations()
      .filter((op) => op.surface === 'control-plane')
      .map((op) => `${op.method.toUpperCase()} ${op.path}`);
    expect([...registered].filter((r) => !documented.includes(r)).sort(), 'registered but not documented').toEqual([]);
    expect(documented.filter((d) => !registered.has(d)).sort(), 'documented but not registered').toEqual([]);
  });

  it('serves the document raw at GET /v1/openapi.json (no envelope)', async () => {
    const res = await http(server.url, 'GET', '/v1/openapi.json');
    expect(res.status, show(res)).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('1.0.0');
    expect(res.body).not.toHaveProperty('ok');
    expect(res.body).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(servers()))));
    // Its servers are this deployment's addresses, not a fixed localhost:3000 (issue 22).
    expect(res.body.servers[0].variables.base_url.default).toBe(server.url);
    expect(res.body.paths['/v1/proxy/{apiSlug}/{path}'].servers[0].variables.gateway_url.default).toBe(GATEWAY);
    // No zod artefact bounds (they showed as -9007199254740991 in examples), and each error status has its own code.
    expect(res.text).not.toContain('9007199254740991');
    const example = (status: number) =>
      res.body.components.responses[`Error${status}`].content['application/json'].example;
    expect(example(500).error.code).toBe('internal_error');
    expect(example(503).error.code).toBe('internal_error');
    expect(example(404).error.code).toBe('not_found');
  });

  it('serves the reference page and its assets from our own copy, whitelisted', async () => {
    const page = await http(server.url, 'GET', '/docs');
    expect(page.status, show(page)).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(referenceCsp(GATEWAY));
    expect(page.headers.get('content-security-policy')).toContain(`connect-src 'self' ${GATEWAY};`);
    expect(page.text).not.toMatch(/<script>|<script [^>]*>[^<]/); // no inline script
    expect(page.text).not.toMatch(/https?:\/\//); // no CDN
    const assets = [...page.text.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(4);
    for (const asset of assets) {
      const res = await http(server.url, 'GET', asset);
      expect(res.status, `${asset}: ${show(res)}`).toBe(200);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expectFailure(await http(server.url, 'GET', '/docs/assets/index.html'), 404, 'not_found');
    expectFailure(await http(server.url, 'GET', '/docs/assets/package.json'), 404, 'not_found');
    expectFailure(await http(server.url, 'GET', '/docs/assets/..%2Fpackage.json'), 404, 'not_found');
    // The Markdown docs keep their route, and other pages keep the strict CSP.
    const readme = await http(server.url, 'GET', '/docs/README.md');
    expect(readme.status, show(readme)).toBe(200);
    expect(readme.headers.get('content-type')).toBe('text/html; charset=utf-8'); // rendered (issue 31)
    const login = await http(server.url, 'GET', '/login');
    expect(login.headers.get('content-security-policy')).toBe(PAGE_CSP);
  });

  // Needs Chromium at CHROMIUM (test/helpers/browser.ts); a machine without it skips this one visibly.
  describe.skipIf(!existsSync(CHROMIUM))('in a browser', () => {
    const browser = suiteBrowser();

    it('renders the operations with no CSP violation and no request leaving the deployment', async () => {
      const page = await browser().newPage();
      const problems: string[] = [];
      page.on('console', (msg) => {
        if (msg.type() === 'error') problems.push(msg.text());
      });
      page.on('request', (req) => {
        if (!req.url().startsWith(server.url) && !req.url().startsWith('data:')) problems.push(`left: ${req.url()}`);
      });
      await page.goto(`${server.url}/docs`);
      await page.locator('.opblock').first().waitFor({ timeout: 20_000 });
      // Swagger UI renders a list of 150 tags and operations or more through a window virtualizer (only what is near
      // the viewport is in the DOM): scroll to the end, gathering every operation block that was rendered on the way.
      const seen = new Set<string>();
      for (let step = 0; step < 400; step++) {
        for (const id of await page.locator('.opblock').evaluateAll((els) => els.map((e) => e.id))) seen.add(id);
        const atEnd = await page.evaluate(() => {
          const w = globalThis as unknown as {
            scrollY: number;
            innerHeight: number;
            scrollBy(x: number, y: number): void;
          };
          const before = w.scrollY;
          w.scrollBy(0, w.innerHeight / 2);
          return w.scrollY === before;
        });
        if (atEnd) break;
        await page.waitForTimeout(30);
      }
      const doc = buildOpenApiDocument(servers());
      const documented = Object.values(doc.paths as Record<string, Record<string, unknown>>).flatMap((item) =>
        Object.keys(item).filter((m) => ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'].includes(m)),
      );
      expect(seen.size, [...seen].slice(0, 5).join(', ')).toBe(documented.length);
      expect(problems).toEqual([]);
      await page.close();
    });

    it('"Try it out" calls this deployment and shows the answer', async () => {
      const page = await browser().newPage();
      // A deep link scrolls the (virtualized) list to the operation and opens it.
      await page.goto(`${server.url}/docs#/Catalog/listCategories`);
      const op = page.locator('#operations-Catalog-listCategories');
      await op.waitFor({ timeout: 20_000 });
      // The deep link opens it; a list short of the virtualizer's threshold needs the click.
      if (!(await op.getAttribute('class'))?.includes('is-open')) await op.locator('.opblock-summary').click();
      await op.getByRole('button', { name: 'Try it out' }).click();
      await op.getByRole('button', { name: 'Execute' }).click();
      await op.locator('.live-responses-table tr.response .response-col_status').first().waitFor({ timeout: 20_000 });
      expect(
        (await op.locator('.live-responses-table tr.response .response-col_status').first().innerText()).trim(),
      ).toBe('200');
      await page.close();
    });
  });
});
