/**
 * The console's frame: a wider page than the single-step pages, a section nav, the signed-in person, and sign-out.
 * Every console page is server-rendered, works without JavaScript, and keeps the strict CSP of `layout.ts`.
 * `consolePage()` wraps a handler: no session → 303 to `/login?next=…`; domain errors → the page with the message.
 */
import type Router from '@koa/router';
import { escapeHtml } from '../../../core/html.js';
import { requireScope, type Scope } from '../../../core/auth/scopes.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext, AppState } from '../../context.js';
import { PAGE_CSP } from '../layout.js';
import { csrfToken, hidden, pageError, readForm, requireSignedIn } from '../forms.js';

export const CONSOLE_SECTIONS = [
  { id: 'overview', path: '/console', label: 'Overview' },
  { id: 'keys', path: '/console/keys', label: 'Keys' },
  { id: 'usage', path: '/console/usage', label: 'Usage' },
  { id: 'billing', path: '/console/billing', label: 'Billing' },
  { id: 'catalog', path: '/console/catalog', label: 'Catalog' },
  { id: 'provider', path: '/console/provider', label: 'Provider' },
] as const;

export type ConsoleSection = (typeof CONSOLE_SECTIONS)[number]['id'];

/** Integer cents as `$1.23` (negative as `-$1.23`). */
export function money(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}$${Math.floor(abs / 100).toLocaleString('en-US')}.${String(abs % 100).padStart(2, '0')}`;
}

export interface ConsoleView {
  section: ConsoleSection;
  title: string;
  body: string;
  /** Shown above the title (low balance, suspension, a flash after a form). */
  banners?: string[];
  status?: number;
}

const STYLE = `
  body { font: 15px/1.5 system-ui, sans-serif; margin: 0; color: #1b1b1f; background: #fafafa; }
  header.top { display: flex; align-items: center; gap: 1.5rem; padding: .6rem 1.5rem; background: #1b1b1f; color: #fff; flex-wrap: wrap; }
  header.top a { color: #fff; text-decoration: none; padding: .2rem .1rem; }
  header.top a[aria-current=page] { border-bottom: 2px solid #fff; font-weight: 600; }
  header.top nav ul { display: flex; gap: 1.1rem; list-style: none; margin: 0; padding: 0; flex-wrap: wrap; }
  header.top .who { margin-left: auto; display: flex; gap: .8rem; align-items: center; font-size: .9rem; }
  header.top .who button { margin: 0; padding: .25rem .7rem; font-size: .85rem; }
  main { max-width: 72rem; margin: 1.5rem auto; padding: 0 1.5rem; }
  h1 { font-size: 1.5rem; margin: .5rem 0 1rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
  table { border-collapse: collapse; width: 100%; background: #fff; }
  th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid #e2e2e2; vertical-align: top; }
  td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
  label { display: block; margin: .6rem 0 .2rem; font-weight: 600; }
  input, select { padding: .45rem; font-size: .95rem; box-sizing: border-box; }
  button, .button { padding: .45rem 1rem; font-size: .95rem; cursor: pointer; }
  form.inline { display: inline; } form.filters { display: flex; gap: .8rem; flex-wrap: wrap; align-items: end; }
  form.filters label { margin: 0 0 .2rem; }
  .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(12rem, 1fr)); gap: 1rem; }
  .card { background: #fff; border: 1px solid #e2e2e2; border-radius: 6px; padding: .8rem 1rem; }
  .card .figure { font-size: 1.6rem; font-weight: 600; }
  .banner { padding: .7rem 1rem; border-radius: 6px; margin: 0 0 1rem; }
  .banner.warn { background: #fff4e5; border: 1px solid #c2571a; } .banner.bad { background: #fde8e8; border: 1px solid #a4161a; }
  .banner.good { background: #e8f5ea; border: 1px solid #1b6b2c; }
  .error { color: #a4161a; } .ok { color: #1b6b2c; } .muted { color: #555; font-size: .9rem; }
  figure.chart { margin: 1rem 0; background: #fff; border: 1px solid #e2e2e2; border-radius: 6px; padding: .8rem; }
  figure.chart figcaption { font-weight: 600; margin-bottom: .4rem; }
  .legend span { margin-right: 1rem; font-size: .9rem; }
  .visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; border: 0; overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; }
  /* A table ignores height and overflow: as a block it collapses too (the charts' data tables left ~1,100 px of blank). */
  table.visually-hidden { display: block; }
  .empty { padding: 1.5rem; background: #fff; border: 1px dashed #bbb; border-radius: 6px; text-align: center; color: #555; }
  a { color: #1f4aa0; }
  ul.chips { display: flex; flex-wrap: wrap; gap: .5rem 1rem; list-style: none; padding: 0; margin: .5rem 0 1rem; }
  ul.chips a[aria-current=page] { font-weight: 600; color: #1b1b1f; }
  .badge { display: inline-block; padding: 0 .5rem; border-radius: 1rem; border: 1px solid #888; font-size: .85rem; background: #fff; }
  .badge.ok { border-color: #1b6b2c; } .badge.error { border-color: #a4161a; }
  label.inline-label { display: inline; font-weight: normal; margin: 0; }
  textarea { font: .9rem/1.4 ui-monospace, monospace; padding: .45rem; box-sizing: border-box; max-width: 100%; }
  a.button { display: inline-block; border: 1px solid #1f4aa0; border-radius: 4px; text-decoration: none; }
  .panel { background: #fff; border: 1px solid #e2e2e2; border-radius: 6px; padding: .4rem 1rem 1rem; }
  .cap-fields { display: flex; gap: 1rem; flex-wrap: wrap; margin-bottom: .8rem; }
  .cap-fields label input[type=checkbox] { margin-right: .3rem; }
  .inline-label { display: inline; margin: 0 .3rem 0 0; font-weight: normal; }
  details summary { cursor: pointer; color: #1f4aa0; }
  td form.inline button, td details { margin: .2rem 0; }
  .pager { display: flex; gap: 1rem; margin: .8rem 0; }
  .packs { display: grid; grid-template-columns: repeat(auto-fit, minmax(12rem, 1fr)); gap: 1rem; }
  input[readonly] { font-family: ui-monospace, monospace; }
  fieldset.scopes { border: 1px solid #e2e2e2; border-radius: 6px; margin: 0 0 .8rem; padding: .4rem .8rem; }
  .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(26rem, 1fr)); gap: 0 1rem; }
`;

function nav(active: ConsoleSection, person: SessionPrincipal, csrf: string): string {
  const links = CONSOLE_SECTIONS.map(
    (s) => `<li><a href="${s.path}"${s.id === active ? ' aria-current="page"' : ''}>${escapeHtml(s.label)}</a></li>`,
  ).join('');
  return `<header class="top"><a href="/console"><strong>API marketplace</strong></a>
<nav aria-label="Console"><ul>${links}</ul></nav>
<div class="who"><span>${escapeHtml(person.email ?? 'Signed in')} · ${escapeHtml(person.role)}</span>
<form method="post" action="/logout" class="inline">${hidden('csrf', csrf)}<button type="submit">Sign out</button></form></div></header>`;
}

export function renderConsole(ctx: AppContext, person: SessionPrincipal, view: ConsoleView): void {
  ctx.status = view.status ?? 200;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', PAGE_CSP);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  const section = CONSOLE_SECTIONS.find((s) => s.id === view.section)!;
  ctx.body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${view.title === section.label ? '' : `${escapeHtml(view.title)} · `}${escapeHtml(section.label)} · API marketplace</title>
<style>${STYLE}</style>
</head>
<body>
${nav(view.section, person, csrfToken(ctx))}
<main>
${(view.banners ?? []).join('\n')}
<h1>${escapeHtml(view.title)}</h1>
${view.body}
</main>
</body>
</html>`;
}

export function banner(kind: 'warn' | 'bad' | 'good', html: string): string {
  return `<div class="banner ${kind}" role="${kind === 'good' ? 'status' : 'alert'}">${html}</div>`;
}

/** A clear empty state: what is missing and what to do next. */
export function emptyState(html: string): string {
  return `<div class="empty">${html}</div>`;
}

/**
 * Wrap a console handler: the person must be signed in (else 303 to the login page, coming back here); a domain
 * error renders the section with the message and the error's status instead of the JSON envelope.
 */
export function consolePage(
  services: Services,
  section: ConsoleSection,
  fn: (ctx: AppContext, person: SessionPrincipal) => Promise<ConsoleView | void>,
) {
  return async (ctx: AppContext) => {
    // A form posted while signed out comes back to its section (its own URL answers only POST).
    const home = CONSOLE_SECTIONS.find((s) => s.id === section)!.path;
    const here = ctx.method === 'GET' ? ctx.path : home;
    const person = await requireSignedIn(ctx, services, ctx.method === 'GET' ? ctx.originalUrl.slice(0, 200) : home);
    if (!person) return;
    try {
      const view = await fn(ctx, person);
      if (view) renderConsole(ctx, person, view);
    } catch (err) {
      // Every failure is a console page, never the JSON envelope: a person reads it (a 5xx is logged first).
      const appError = pageError(ctx, err);
      for (const [k, v] of Object.entries(appError.headers ?? {})) ctx.set(k, v);
      const title = CONSOLE_SECTIONS.find((s) => s.id === section)!.label;
      renderConsole(ctx, person, {
        section,
        title,
        status: appError.status,
        body: `<p class="error" role="alert">${escapeHtml(appError.message)}</p><p><a href="${escapeHtml(here)}">Back</a></p>`,
      });
    }
  };
}

/** A console form: read (its CSRF token checked), then the scope it needs, then `fn` with the fields. */
export function consoleForm(
  services: Services,
  section: ConsoleSection,
  scope: Scope,
  fn: (ctx: AppContext, person: SessionPrincipal, form: Record<string, string>) => Promise<ConsoleView | void>,
) {
  return consolePage(services, section, async (ctx, person) => {
    const form = await readForm(ctx);
    requireScope(person, scope);
    return fn(ctx, person, form);
  });
}

export type ConsoleRoutes = (services: Services, router: Router<AppState>) => void;
