// The control plane's root: a browser gets a small HTML page (our page layout, strict CSP) saying what this is and
// linking to sign-in, the docs and the Temporal UI; a JSON client asking for JSON still gets the 404 envelope. The
// docs it links to are served from this checkout as HTML (their Markdown with ?raw=1). Checked over HTTP and in
// headless Chromium.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../api/app.js';
import { PAGE_CSP } from '../../../api/pages/layout.js';
import type { RunningHttpServer } from '../../../platform/runtime/http-server.js';
import { suiteBrowser } from '../../helpers/suite-browser.js';
import { ROOT } from '../../helpers/env.js';
import { expectFailure, http, serve, describe as show } from '../../helpers/http.js';
import { createTestStack, type TestStack } from '../../helpers/services.js';

const TEMPORAL_UI = 'http://temporal-ui.example:8080';

describe('control plane root page', () => {
  let stack: TestStack;
  let server: RunningHttpServer;

  beforeAll(async () => {
    stack = await createTestStack({ env: { TEMPORAL_UI_URL: TEMPORAL_UI } });
    server = await serve(createApiApp(stack.services).callback());
  });
  afterAll(async () => {
    await server?.close();
    await stack?.close();
  });

  it('answers a browser with an HTML page under the strict CSP, linking to sign-in, the docs and the Temporal UI', async () => {
    const res = await http(server.url, 'GET', '/', {
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    expect(res.status, show(res)).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(res.text).toContain('<title>Welcome · API marketplace</title>');
    expect(res.text).toContain('self-hosted <strong>API marketplace</strong>');
    // Signed out: sign up or sign in, the console and the reference (issue 22).
    expect(res.text).toContain('<a href="/signup">Create an account</a>');
    expect(res.text).toContain('<a href="/login">sign in</a>');
    expect(res.text).toContain('<a href="/console">console</a>');
    expect(res.text).toContain('<a href="/docs">API reference</a>');
    expect(res.text).toContain(`<a href="${TEMPORAL_UI}/namespaces/default/workflows">Temporal UI</a>`);
    for (const doc of ['README.md', 'spec.md', 'decisions.md', 'api-conventions.md', 'operations.md']) {
      expect(res.text).toContain(`<a href="/docs/${doc}">`);
    }
    expect(res.text).toContain(`${stack.config.urls.mcp}/mcp`);
    expect(res.text).not.toMatch(/<script/i);
  });

  it('gives curl (Accept: */*) the page too, and a JSON client the 404 envelope', async () => {
    const curl = await http(server.url, 'GET', '/', { headers: { accept: '*/*' } });
    expect(curl.status).toBe(200);
    expect(curl.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const json = await http(server.url, 'GET', '/', { headers: { accept: 'application/json' } });
    expectFailure(json, 404, 'not_found');
  });

  it('serves the linked docs as HTML for this deployment, their Markdown with ?raw=1, and nothing outside them', async () => {
    // Issue 31: rendered with markdown-it under the page CSP; placeholders read as the configured URLs.
    const html = await http(server.url, 'GET', '/docs/agent-tools.md', { headers: { accept: 'text/html' } });
    expect(html.status, show(html)).toBe(200);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(html.text).toContain(`<h1 id="`);
    expect(html.text).toContain(`<code>${stack.config.urls.mcp}/mcp</code>`);
    expect(html.text).not.toMatch(/\{(mcp_url|base_url|gateway_url)\}/);
    expect(html.text).not.toMatch(/<script/i);
    // The Markdown text itself, as before: `?raw=1` or `Accept: text/markdown`.
    const res = await http(server.url, 'GET', '/docs/spec.md?raw=1');
    expect(res.status, show(res)).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(res.text).toBe(await readFile(path.join(ROOT, 'docs', 'spec.md'), 'utf8'));
    const markdown = await http(server.url, 'GET', '/docs/README.md', { headers: { accept: 'text/markdown' } });
    expect(markdown.text).toBe(await readFile(path.join(ROOT, 'README.md'), 'utf8'));
    // The project's testing notes are not served to visitors (issue 22).
    const internal = ['/docs/testing.md', '/docs/testing-properties.md', '/docs/reliability.md'];
    for (const p of [...internal, '/docs/nope.md', '/docs/..%2Fpackage.json', '/docs/%2E%2E%2F.gitignore', '/docs/']) {
      expect((await http(server.url, 'GET', p)).status, p).toBe(404);
    }
  });

  describe('in headless Chromium', () => {
    const browser = suiteBrowser();

    it('shows the page without CSP violations, and its links lead to sign-in and the contract', async () => {
      const page = await browser().newPage();
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' && !m.text().includes('404')) problems.push(m.text()); // CSP violations land here
      });
      page.on('response', (r) => {
        if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) problems.push(`${r.status()} ${r.url()}`);
      });
      await page.goto(`${server.url}/`);
      expect(await page.title()).toBe('Welcome · API marketplace');
      expect(await page.textContent('h1')).toBe('Welcome');
      await page.getByRole('link', { name: 'sign in', exact: true }).click();
      await page.waitForSelector('text=Email me a code');
      await page.goBack();
      await page.getByRole('link', { name: /Service Specification/ }).click();
      await page.waitForURL(`${server.url}/docs/spec.md`);
      expect(await page.getByRole('heading', { name: 'Response envelope' }).getAttribute('id')).toBe(
        'response-envelope',
      );
      expect(problems).toEqual([]);
      await page.close();
    });
  });
});
