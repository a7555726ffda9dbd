/**
 * `/`: what a person who opens the control plane in a browser sees: what this is, the storefront (search the APIs,
 * the boards, the market), where to sign in, the docs and the Temporal UI. JSON clients (`Accept: application/json`)
 * still get the 404 envelope: the API has no root.
 * `/docs/{file}`: the Markdown docs shipped with the source (`README.md`, `docs/*.md`), rendered as HTML for this
 * deployment (docs-render.ts: its URLs filled in, links between docs kept here), so the page's links work without
 * leaving it; the Markdown itself with `?raw=1` or `Accept: text/markdown`. An image built without `docs/` lists
 * none and says where they are.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import Router from '@koa/router';
import { NotFoundError } from '../../core/errors.js';
import type { Services } from '../../platform/services.js';
import type { AppState } from '../context.js';
import { escapeHtml } from './layout.js';
import { paramOf, render, signedIn } from './forms.js';
import { documented, empty, media, pageOperation } from '../openapi/operation.js';
import { fillPlaceholders, renderDoc } from './docs-render.js';
import { sendStorefront } from './storefront/frame.js';

const SOURCE_ROOT = path.resolve(import.meta.dirname, '..', '..');

interface Doc {
  file: string;
  title: string;
  path: string;
}

/** The project's own working notes: how it is tested, not how to use it (issue 22: not served to visitors). */
const INTERNAL_DOCS = new Set(['testing.md', 'testing-properties.md', 'reliability.md']);

/** The shipped docs, read once: README first, then the contract, then the rest by name. */
function shippedDocs(): Doc[] {
  const candidates = [path.join(SOURCE_ROOT, 'README.md')];
  try {
    const dir = path.join(SOURCE_ROOT, 'docs');
    for (const name of readdirSync(dir).sort()) {
      if (name.endsWith('.md') && !INTERNAL_DOCS.has(name)) candidates.push(path.join(dir, name));
    }
  } catch {
    // not shipped (the production image leaves docs/ out)
  }
  const docs: Doc[] = [];
  for (const file of candidates) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    const title = (/^# (.+)$/m.exec(text)?.[1] ?? path.basename(file)).replace(/`/g, '');
    docs.push({ file: path.basename(file), title, path: file });
  }
  const rank = (d: Doc) => (d.file === 'README.md' ? 0 : d.file === 'spec.md' ? 1 : 2);
  return docs.sort((a, b) => rank(a) - rank(b));
}

/** `/docs/{file}`: a shipped doc as HTML (rendered once per version of its file), or its Markdown. */
function docsRoute(router: Router<AppState>, services: Services, docs: Doc[]): void {
  const { urls } = services.config;
  const byFile = new Map(docs.map((d) => [d.file, d]));
  const served = new Set(docs.map((d) => d.file));
  const rendered = new Map<string, { mtimeMs: number; html: string }>();
  /** A doc as HTML, rendered once per version of its file. */
  const docHtml = async (doc: Doc): Promise<string> => {
    const { mtimeMs } = await stat(doc.path);
    const hit = rendered.get(doc.file);
    if (hit?.mtimeMs === mtimeMs) return hit.html;
    const source = doc.file === 'README.md' ? 'README.md' : `docs/${doc.file}`;
    const html = renderDoc(await readFile(doc.path, 'utf8'), source, served, urls);
    rendered.set(doc.file, { mtimeMs, html });
    return html;
  };

  router.get('/docs/:file', async (ctx) => {
    const doc = byFile.get(paramOf(ctx, 'file'));
    if (!doc) throw new NotFoundError(`No document ${paramOf(ctx, 'file')}; the list is on /.`);
    if (ctx.query.raw === '1' || ctx.accepts('html', 'text/markdown') === 'text/markdown') {
      ctx.type = 'text/plain; charset=utf-8';
      ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = await readFile(doc.path);
      return;
    }
    const person = await signedIn(ctx, services);
    const body = `<article class="doc">${await docHtml(doc)}</article>
<p class="muted">The Markdown source: <a href="/docs/${encodeURIComponent(doc.file)}?raw=1">${escapeHtml(doc.file)}</a>.</p>`;
    sendStorefront(
      ctx,
      { title: doc.title, body, ownHeading: true, head: { canonical: `/docs/${doc.file}` } },
      { person },
      urls.publicBase,
    );
  });
}

export function homePages(services: Services): Router<AppState> {
  const router = new Router<AppState>();
  const { urls, temporal } = services.config;
  const docs = shippedDocs().map((d) => ({ ...d, title: fillPlaceholders(d.title, urls) }));

  const link = (href: string, text: string) => `<a href="${escapeHtml(href)}">${escapeHtml(text)}</a>`;
  const code = (text: string) => `<code>${escapeHtml(text)}</code>`;
  const temporalUi = urls.temporalUi
    ? `${urls.temporalUi}/namespaces/${encodeURIComponent(temporal.namespace)}/workflows`
    : undefined;
  const docsList = docs.length
    ? `<ul>\n${docs.map((d) => `<li>${link(`/docs/${d.file}`, d.title)}</li>`).join('\n')}\n</ul>`
    : '<p class="muted">This build does not ship the docs: read <code>README.md</code> and <code>docs/</code> in the source repository.</p>';
  const body = `<p>This is the control plane of a self-hosted <strong>API marketplace</strong>. Providers list APIs with a
price per endpoint; people and AI agents hold scoped API keys with money caps and call those APIs through a metered
gateway, or as MCP tools.</p>
<h2>Browse the APIs</h2>
<form method="get" action="/apis" role="search"><label for="home-q">Search the catalog</label>
<input id="home-q" name="q" type="text" placeholder="weather forecast, geocoding…"> <button type="submit">Search</button></form>
<ul>
<li>${link('/apis', 'All APIs')}: every listing with its prices, stats and ready-to-run snippets, no sign-in needed</li>
<li>${link('/leaderboards', 'Leaderboards')}: top grossing, most used, most reliable, best value, trending, new</li>
<li>${link('/market', 'Market')}: the marketplace at a glance</li>
</ul>
<h2>People</h2>
{people}
<h2>Programs and agents</h2>
<ul>
<li>REST API: ${code(`${urls.publicBase}/v1/`)}; start with ${code(`curl -X POST ${urls.publicBase}/v1/register`)}</li>
<li>Gateway: ${code(`${urls.gateway}/v1/proxy/{apiSlug}/{path}`)}</li>
<li>MCP tools (Streamable HTTP): ${code(`${urls.mcp}/mcp`)}</li>
<li>${link('/llms.txt', 'llms.txt')}: how an agent uses this marketplace; ${link('/sitemap.xml', 'sitemap')} of every listing</li>
<li>${link('/docs', 'API reference')}: every route, browsable and callable from the page</li>
</ul>
<h2>Operators</h2>
<ul>
${temporalUi ? `<li>${link(temporalUi, 'Temporal UI')}: every durable flow (credits, publishing, billing) as a workflow</li>\n` : ''}<li>${link('/health', 'Health')}: database, counters and Temporal</li>
</ul>
<h2>Docs</h2>
${docsList}`;

  // What a person can do next, as fits who they are: signed in, the console; otherwise sign up or sign in.
  const signedOut = `<p>${link('/signup', 'Create an account')} or ${link('/login', 'sign in')} with a one-time code
sent to your email, then use the ${link('/console', 'console')}: keys with money caps, credits, usage, the catalog and
your own APIs.</p>`;
  const signedInAs = (email: string) => `<p>Signed in as <strong>${escapeHtml(email)}</strong>.
${link('/console', 'Open the console')}: keys with money caps, credits, usage, the catalog and your own APIs.</p>`;

  router.get('/', async (ctx) => {
    if (ctx.accepts('html', 'json') !== 'html') throw new NotFoundError(`No route for ${ctx.method} ${ctx.path}.`);
    const person = await signedIn(ctx, services);
    const email = person ? (await services.accounts.me(person)).user?.email : undefined;
    render(ctx, 200, 'Welcome', body.replace('{people}', person ? signedInAs(email ?? 'you') : signedOut));
  });

  docsRoute(router, services, docs);
  return router;
}

/** The documented operations of this file's routes (api/openapi/operations.ts gathers them). */
export const HOME_PAGE_OPERATIONS = [
  pageOperation('get', '/', 'getHome', 'Home page'),
  documented({
    ...pageOperation('get', '/docs/{file}', 'getDoc', 'A shipped Markdown doc, as HTML (`?raw=1`: the Markdown text)'),
    success: {
      200: media(
        'text/*',
        'The doc as `text/html`; with `?raw=1` or `Accept: text/markdown`, its Markdown as `text/plain`.',
      ),
      304: empty('Not modified: the If-None-Match header holds the current ETag.'),
    },
  }),
];
