/**
 * The storefront's frame (issue 31): the public pages' HTML around a view (a header with the site's links and who is
 * signed in, the view's title and body), its `<head>` for machines (description, canonical URL, OpenGraph, JSON-LD
 * with the CSP hash of each block), and how it is sent: cacheable with an ETag for an anonymous visitor, `private,
 * no-store` for a signed-in person (their header and key context are theirs alone).
 */
import { createHash } from 'node:crypto';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { AppContext } from '../../context.js';
import { escapeHtml, pageCsp } from '../layout.js';
import { CATALOG_CSS } from './catalog-css.js';

/** What a page says about itself to machines. */
export interface PageHead {
  description?: string;
  /** The page's own path (made absolute with PUBLIC_BASE_URL): the canonical URL and `og:url`. */
  canonical?: string;
  /** `og:type`: `website` unless given. */
  ogType?: string;
  /** schema.org objects, one `<script type="application/ld+json">` each. */
  jsonLd?: readonly Record<string, unknown>[];
}

export interface StorefrontView {
  title: string;
  body: string;
  status?: number;
  head?: PageHead;
  /** The body brings its own `<h1>` (a rendered document). */
  ownHeading?: boolean;
}

/** Who is looking: nobody signed in, or a person (their header, and their keys on a listing). */
export interface Viewer {
  person?: SessionPrincipal;
}

/** Anonymous pages: a minute in any cache, then revalidated with the ETag (docs/decisions.md, "The storefront"). */
export const ANONYMOUS_CACHE_CONTROL = 'public, max-age=60';
export const SIGNED_IN_CACHE_CONTROL = 'private, no-store';

const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #1b1b1f; background: #fafafa; }
  header.site { display: flex; align-items: center; gap: 1.5rem; padding: .6rem 1.5rem; background: #1b1b1f; color: #fff; flex-wrap: wrap; }
  header.site a { color: #fff; }
  header.site nav ul { display: flex; gap: 1.1rem; list-style: none; margin: 0; padding: 0; flex-wrap: wrap; }
  header.site a[aria-current=page] { font-weight: 600; }
  header.site .who { margin-left: auto; display: flex; gap: 1rem; font-size: .95rem; }
  main { max-width: 72rem; margin: 1.5rem auto; padding: 0 1.5rem; }
  footer.site { max-width: 72rem; margin: 3rem auto 2rem; padding: 0 1.5rem; color: #555; font-size: .9rem; }
  h1 { font-size: 1.6rem; margin: .5rem 0 1rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
  table { border-collapse: collapse; width: 100%; background: #fff; }
  th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid #e2e2e2; vertical-align: top; }
  td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
  label { display: block; margin: .6rem 0 .2rem; font-weight: 600; }
  input, select { padding: .45rem; font-size: .95rem; box-sizing: border-box; }
  button { padding: .45rem 1rem; font-size: .95rem; cursor: pointer; }
  form.filters { display: flex; gap: .8rem; flex-wrap: wrap; align-items: end; } form.filters label { margin: 0 0 .2rem; }
  .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); gap: 1rem; }
  .card { background: #fff; border: 1px solid #e2e2e2; border-radius: 6px; padding: .8rem 1rem; }
  .card .figure { font-size: 1.5rem; font-weight: 600; }
  .banner { padding: .7rem 1rem; border-radius: 6px; margin: 0 0 1rem; }
  .banner.warn { background: #fff4e5; border: 1px solid #c2571a; } .banner.bad { background: #fde8e8; border: 1px solid #a4161a; }
  .banner.good { background: #e8f5ea; border: 1px solid #1b6b2c; }
  .error { color: #a4161a; } .ok { color: #1b6b2c; } .muted { color: #555; font-size: .9rem; }
  .empty { padding: 1.5rem; background: #fff; border: 1px dashed #bbb; border-radius: 6px; text-align: center; color: #555; }
  a { color: #1f4aa0; }
  ul.chips { display: flex; flex-wrap: wrap; gap: .5rem 1rem; list-style: none; padding: 0; margin: .5rem 0 1rem; }
  ul.chips a[aria-current=page] { font-weight: 600; color: #1b1b1f; }
  .badge { display: inline-block; padding: 0 .5rem; border-radius: 1rem; border: 1px solid #888; font-size: .85rem; background: #fff; }
  figure.chart { margin: 1rem 0; background: #fff; border: 1px solid #e2e2e2; border-radius: 6px; padding: .8rem; }
  figure.chart figcaption { font-weight: 600; margin-bottom: .4rem; }
  .legend span { margin-right: 1rem; font-size: .9rem; }
  .visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; border: 0; overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; }
  table.visually-hidden { display: block; }
  .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(26rem, 1fr)); gap: 0 1rem; }
  article.doc { max-width: 52rem; } article.doc pre { white-space: pre; }
${CATALOG_CSS}`;

const NAV = [
  { path: '/apis', label: 'APIs' },
  { path: '/leaderboards', label: 'Leaderboards' },
  { path: '/market', label: 'Market' },
  { path: '/docs/README.md', label: 'Docs' },
] as const;

/** A value inside a `<script type="application/ld+json">`: JSON that cannot end the element or open a comment. */
export function jsonLdText(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64');

function header(path: string, viewer: Viewer): string {
  const links = NAV.map(
    (n) =>
      `<li><a href="${n.path}"${path === n.path || path.startsWith(`${n.path}/`) ? ' aria-current="page"' : ''}>${n.label}</a></li>`,
  ).join('');
  const next = encodeURIComponent(path);
  const who = viewer.person
    ? `<span>${escapeHtml(viewer.person.email ?? 'Signed in')}</span><a href="/console">Console</a>`
    : `<a href="/login?next=${next}">Sign in</a><a href="/signup?next=${next}">Create an account</a>`;
  return `<header class="site"><a href="/"><strong>API marketplace</strong></a>
<nav aria-label="Site"><ul>${links}</ul></nav>
<div class="who">${who}</div></header>`;
}

/** The whole page and the hashes of its inline scripts (for the CSP). */
export function storefrontHtml(
  view: StorefrontView,
  viewer: Viewer,
  where: { path: string; publicBase: string },
): { html: string; scriptHashes: string[] } {
  const head = view.head ?? {};
  const canonical = head.canonical ? `${where.publicBase}${head.canonical}` : undefined;
  const description = head.description ?? 'APIs for people and AI agents: search, compare prices and call them.';
  const scripts = (head.jsonLd ?? []).map(jsonLdText);
  const meta = [
    `<meta name="description" content="${escapeHtml(description)}">`,
    canonical ? `<link rel="canonical" href="${escapeHtml(canonical)}">` : '',
    `<meta property="og:type" content="${escapeHtml(head.ogType ?? 'website')}">`,
    `<meta property="og:title" content="${escapeHtml(view.title)}">`,
    `<meta property="og:description" content="${escapeHtml(description)}">`,
    `<meta property="og:site_name" content="API marketplace">`,
    canonical ? `<meta property="og:url" content="${escapeHtml(canonical)}">` : '',
    ...scripts.map((s) => `<script type="application/ld+json">${s}</script>`),
  ].filter(Boolean);
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(view.title)} · API marketplace</title>
${meta.join('\n')}
<style>${STYLE}</style>
</head>
<body>
${header(where.path, viewer)}
<main>
${view.ownHeading ? '' : `<h1>${escapeHtml(view.title)}</h1>\n`}${view.body}
</main>
<footer class="site"><p>Self-hosted API marketplace · <a href="/apis">All APIs</a> · <a href="/llms.txt">llms.txt</a> · <a href="/sitemap.xml">Sitemap</a> · <a href="/docs">API reference</a></p></footer>
</body>
</html>`;
  return { html, scriptHashes: scripts.map(sha256) };
}

/** A weak validator of a body: the same bytes, the same tag. */
export const etagOf = (body: string | Buffer) =>
  `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

/**
 * If-None-Match against our tag, by the weak comparison (RFC 9110 13.1.2). The origin evaluates it whatever the
 * request's Cache-Control says (`no-cache` is for caches on the way: fetch() adds it to every conditional request).
 */
export function matchesEtag(header: string, etag: string): boolean {
  if (!header) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((t) => t.trim() === '*' || opaque(t) === opaque(etag));
}

/**
 * Send a public response: cacheable (ETag, `Cache-Control: public`, 304 on a matching If-None-Match) unless the
 * viewer is signed in or the status is not 200. `Vary: Cookie`: the signed-in answer differs.
 */
export function sendPublic(
  ctx: AppContext,
  body: string,
  options: { type: string; status?: number; csp?: string; signedIn: boolean },
): void {
  ctx.status = options.status ?? 200;
  ctx.type = options.type;
  if (options.csp) ctx.set('Content-Security-Policy', options.csp);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'strict-origin-when-cross-origin');
  ctx.set('Vary', 'Cookie');
  if (options.signedIn || ctx.status !== 200) {
    ctx.set('Cache-Control', options.signedIn ? SIGNED_IN_CACHE_CONTROL : 'no-store');
    ctx.body = body;
    return;
  }
  ctx.set('Cache-Control', ANONYMOUS_CACHE_CONTROL);
  const etag = etagOf(body);
  ctx.set('ETag', etag);
  if (matchesEtag(ctx.get('if-none-match'), etag)) {
    ctx.status = 304;
    ctx.body = null;
    return;
  }
  ctx.body = body;
}

/** Render a view in the frame and send it. */
export function sendStorefront(ctx: AppContext, view: StorefrontView, viewer: Viewer, publicBase: string): void {
  const { html, scriptHashes } = storefrontHtml(view, viewer, { path: ctx.path, publicBase });
  sendPublic(ctx, html, {
    type: 'text/html; charset=utf-8',
    status: view.status,
    csp: pageCsp(scriptHashes),
    signedIn: viewer.person !== undefined,
  });
}
