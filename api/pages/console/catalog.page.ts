/**
 * Console · Catalog: the storefront's views (api/pages/storefront: one implementation) in the console's frame, linking
 * within the console, with the signed-in person's keys on a listing and its quote; plus what only a signed-in person
 * does here: request an API the catalog lacks (POST /v1/api-requests, as the person) and see the most requested.
 */
import type Router from '@koa/router';
import { ApiRequestBody } from '../../../core/demand/demand.service.js';
import { AppError } from '../../../core/errors.js';
import { escapeHtml } from '../../../core/html.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext, AppState } from '../../context.js';
import { csrfToken, errorLine, hidden, paramOf, readForm } from '../forms.js';
import { leaderboardPage, leaderboardsPage } from '../storefront/boards-view.js';
import { CATALOG_CSS } from '../storefront/catalog-css.js';
import { listingBody, loadListing, quotePage } from '../storefront/listing-view.js';
import { categoryPage, searchPage } from '../storefront/search-view.js';
import { CONSOLE_CATALOG } from '../storefront/site.js';
import { consolePage, type ConsoleView } from './shell.js';
import { formQuery } from './provider-forms.js';
import { flash, parseForm, seeOther } from './forms.js';

const FLASH = {
  requested: ['good', 'Your request is recorded. Providers see it under Provider · Requests.'],
  merged: ['good', 'A similar request was already open; your vote was added to it.'],
} as const satisfies Record<string, ['good' | 'warn' | 'bad', string]>;

const SITE = CONSOLE_CATALOG;

/** A shared view's body with the catalog's few styles (the console frame has the rest). */
const styled = (body: string) => `<style>${CATALOG_CSS}</style>\n${body}`;

function requestForm(ctx: AppContext, query: string, message?: string): string {
  return `<section aria-labelledby="request-h"><h2 id="request-h">Request an API</h2>
<p class="muted">Missing something? Tell providers what you need; they see the most requested APIs.</p>
${errorLine(message)}
<form method="post" action="/console/catalog/requests">${hidden('csrf', csrfToken(ctx))}
<label for="request-query">What should the API do?</label><input id="request-query" name="query" required maxlength="500" size="50" value="${escapeHtml(query)}">
<label for="request-notes">Notes (optional, not shown publicly)</label><input id="request-notes" name="notes" maxlength="2000" size="50">
<p><button type="submit">Request this API</button></p></form></section>`;
}

async function catalogView(
  services: Services,
  ctx: AppContext,
  requestError?: { message: string; query: string },
): Promise<ConsoleView> {
  const query = formQuery(ctx);
  const [page, requests] = await Promise.all([
    searchPage(services, SITE, query),
    services.demand.list({ limit: 10, status: 'open' }),
  ]);
  const requested = requests.length
    ? `<h3>Most requested</h3><ul>${requests.map((r) => `<li>${escapeHtml(r.query)} <span class="muted">(${r.votes} vote${r.votes === 1 ? '' : 's'})</span></li>`).join('')}</ul>`
    : '';
  return {
    section: 'catalog',
    title: 'Catalog',
    status: requestError ? 400 : page.status,
    banners: flash(ctx, FLASH),
    body: `${styled(page.body)}
<p class="muted">The public storefront shows the same catalog to everyone: <a href="/apis">/apis</a>.</p>
${requestForm(ctx, requestError?.query ?? query.q ?? '', requestError?.message)}
${requested}`,
  };
}

async function requestApi(services: Services, ctx: AppContext, person: SessionPrincipal): Promise<ConsoleView | void> {
  const form = await readForm(ctx);
  try {
    const body = parseForm(ApiRequestBody, {
      query: form.query ?? '',
      ...(form.notes?.trim() ? { notes: form.notes } : {}),
    });
    const { merged } = await services.demand.request(person, body);
    seeOther(ctx, '/console/catalog', merged ? 'merged' : 'requested');
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    return catalogView(services, ctx, { message: err.message, query: form.query ?? '' });
  }
}

type View = (services: Services, ctx: AppContext, person: SessionPrincipal) => Promise<ConsoleView>;

/** The catalog's pages: search, a category, the boards, one board, one listing and its quote. */
const PAGES: [string, View][] = [
  ['/console/catalog', (services, ctx) => catalogView(services, ctx)],
  [
    '/console/catalog/categories/:category',
    async (services, ctx) => {
      const page = await categoryPage(services, SITE, paramOf(ctx, 'category'), formQuery(ctx));
      return { section: 'catalog', title: page.title, status: page.status, body: styled(page.body) };
    },
  ],
  [
    '/console/catalog/leaderboards',
    async (services, ctx) => {
      const page = await leaderboardsPage(services, SITE, formQuery(ctx));
      return { section: 'catalog', title: page.title, body: styled(page.body) };
    },
  ],
  [
    '/console/catalog/leaderboards/:board',
    async (services, ctx) => {
      const page = await leaderboardPage(services, SITE, paramOf(ctx, 'board'), formQuery(ctx));
      return { section: 'catalog', title: page.title, body: styled(page.body) };
    },
  ],
  [
    '/console/catalog/apis/:slug',
    async (services, ctx, person) => {
      const data = await loadListing(services, paramOf(ctx, 'slug'), { person });
      const body = listingBody(SITE, data, { person }, services.config.urls);
      return { section: 'catalog', title: data.detail.name, body: styled(body) };
    },
  ],
  [
    '/console/catalog/apis/:slug/quote',
    async (services, ctx, person) => {
      const page = await quotePage(services, SITE, paramOf(ctx, 'slug'), formQuery(ctx), { person });
      return { section: 'catalog', title: page.title, body: styled(page.body) };
    },
  ],
];

export function catalogConsole(services: Services, router: Router<AppState>): void {
  for (const [path, view] of PAGES)
    router.get(
      path,
      consolePage(services, 'catalog', (ctx, person) => view(services, ctx, person)),
    );
  router.post(
    '/console/catalog/requests',
    consolePage(services, 'catalog', (ctx, person) => requestApi(services, ctx, person)),
  );
}
