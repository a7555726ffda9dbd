/**
 * Console · Catalog: search with filters, sorts and pages (the service behind GET /v1/search), category pages,
 * leaderboards (GET /v1/leaderboards/{board}), a listing's page (GET /v1/apis/{slug}, its stats, history and ranks:
 * endpoints, prices, scheduled changes, charts, terms), and requests for APIs the catalog lacks (POST
 * /v1/api-requests, as the signed-in person).
 */
import type Router from '@koa/router';
import { ApiRequestBody } from '../../../core/demand/demand.service.js';
import { BOARD_METRICS, BOARDS, type Board } from '../../../core/catalog/rollups/rollups.scoring.js';
import { SEARCH_SORTS, SearchQuery, type SearchSort } from '../../../core/catalog/search/search.schemas.js';
import type { CategoryView } from '../../../core/catalog/listings/listings.service.js';
import type { SearchResult } from '../../../core/catalog/search/search.service.js';
import { AppError, NotFoundError } from '../../../core/errors.js';
import { escapeHtml } from '../../../core/html.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext, AppState } from '../../context.js';
import { barChart } from '../charts.js';
import { csrfToken, errorLine, hidden, paramOf, readForm } from '../forms.js';
import { consolePage, emptyState, money, type ConsoleView } from './shell.js';
import { dollarsToCents, formQuery, options } from './provider-forms.js';
import { flash, parseForm, seeOther } from './forms.js';
import { BOARD_LABELS, categoryLink, listingLink, priceRange } from './catalog-common.js';
import { listingView } from './catalog-listing.page.js';

const SORT_LABELS: Record<SearchSort, string> = {
  svc_score: 'SVC score',
  price: 'Price (lowest first)',
  relevance: 'Relevance',
  new: 'Newest',
  calls: 'Most called',
  gmv: 'Top grossing',
  reliability: 'Most reliable',
  value: 'Best value',
  momentum: 'Momentum',
};

const PAGE_SIZES = [10, 25, 50, 100];

const FLASH = {
  requested: ['good', 'Your request is recorded. Providers see it under Provider · Requests.'],
  merged: ['good', 'A similar request was already open; your vote was added to it.'],
} as const satisfies Record<string, ['good' | 'warn' | 'bad', string]>;

function resultsTable(result: SearchResult): string {
  const rows = result.items
    .map(
      (i) => `<tr><td>${listingLink(i.slug, i.name)}<br><span class="muted">${escapeHtml(i.summary)}</span></td>
<td>${categoryLink(i.category)}</td><td>${escapeHtml(priceRange(i.price))}</td>
<td class="num">${i.svc_score}</td><td>${escapeHtml(i.provider.name ?? i.provider.slug ?? '—')}${i.callable ? '' : '<br><span class="muted">Directory entry: not callable</span>'}</td></tr>`,
    )
    .join('');
  return `<table><caption class="visually-hidden">Search results</caption>
<thead><tr><th scope="col">API</th><th scope="col">Category</th><th scope="col">Price</th><th scope="col" class="num">SVC score</th><th scope="col">Provider</th></tr></thead>
<tbody>${rows}</tbody></table>`;
}

/** Previous / next links that keep the other filters. */
function pager(base: string, query: Record<string, string>, result: SearchResult): string {
  const link = (offset: number, label: string, rel: string) =>
    `<a rel="${rel}" href="${base}?${escapeHtml(new URLSearchParams({ ...query, offset: String(offset) }).toString())}">${label}</a>`;
  const parts: string[] = [];
  if (result.offset > 0) parts.push(link(Math.max(0, result.offset - result.limit), '← Previous', 'prev'));
  if (result.offset + result.limit < result.total) parts.push(link(result.offset + result.limit, 'Next →', 'next'));
  return parts.length ? `<nav aria-label="Result pages"><p>${parts.join(' · ')}</p></nav>` : '';
}

function searchForm(
  action: string,
  query: Record<string, string>,
  categories: CategoryView[],
  withCategory: boolean,
): string {
  const category = withCategory
    ? `<div><label for="category">Category</label><select id="category" name="category"><option value="">Any category</option>${options(
        categories.map((c) => ({ value: c.slug, label: `${c.name} (${c.api_count})` })),
        query.category,
      )}</select></div>`
    : '';
  return `<form class="filters" method="get" action="${action}" role="search">
<div><label for="q">Search</label><input id="q" name="q" type="search" value="${escapeHtml(query.q ?? '')}" placeholder="weather forecast, geocoding…" size="30"></div>
${category}
<div><label for="sort">Sort by</label><select id="sort" name="sort"><option value="">Best match</option>${options(
    SEARCH_SORTS.map((s) => ({ value: s, label: SORT_LABELS[s] })),
    query.sort,
  )}</select></div>
<div><label for="source">Source</label><select id="source" name="source"><option value="">Any</option>${options(
    [
      { value: 'provider', label: 'Served through the gateway' },
      { value: 'directory', label: 'Directory links' },
    ],
    query.source,
  )}</select></div>
<div><label><input type="checkbox" name="callable" value="true"${query.callable === 'true' ? ' checked' : ''}> Callable only</label></div>
<div><label for="max_price">Max price per call ($)</label><input id="max_price" name="max_price" inputmode="decimal" size="8" value="${escapeHtml(query.max_price ?? '')}"></div>
<div><label for="limit">Per page</label><select id="limit" name="limit">${options(
    PAGE_SIZES.map((n) => ({ value: String(n), label: String(n) })),
    query.limit ?? '25',
  )}</select></div>
<div><button type="submit">Search</button></div>
</form>`;
}

function requestForm(ctx: AppContext, query: string, message?: string): string {
  return `<section aria-labelledby="request-h"><h2 id="request-h">Request an API</h2>
<p class="muted">Missing something? Tell providers what you need; they see the most requested APIs.</p>
${errorLine(message)}
<form method="post" action="/console/catalog/requests">${hidden('csrf', csrfToken(ctx))}
<label for="request-query">What should the API do?</label><input id="request-query" name="query" required maxlength="500" size="50" value="${escapeHtml(query)}">
<label for="request-notes">Notes (optional, not shown publicly)</label><input id="request-notes" name="notes" maxlength="2000" size="50">
<p><button type="submit">Request this API</button></p></form></section>`;
}

/** The search's input from the page's query (dollars → cents, page size default 25). */
function searchInput(query: Record<string, string>, category?: string) {
  const { max_price, done: _done, ...rest } = query;
  return parseForm(SearchQuery, {
    limit: '25',
    ...rest,
    ...(category ? { category } : {}),
    ...(max_price !== undefined ? { max_price_cents: dollarsToCents(max_price, 'max_price') } : {}),
  });
}

function boardsNav(current?: Board, category?: string): string {
  const qs = category ? `?category=${encodeURIComponent(category)}` : '';
  return `<ul class="chips">${BOARDS.map(
    (b) =>
      `<li><a href="/console/catalog/leaderboards/${b}${qs}"${b === current ? ' aria-current="page"' : ''}>${escapeHtml(BOARD_LABELS[b])}</a></li>`,
  ).join('')}</ul>`;
}

function categoriesList(categories: CategoryView[]): string {
  if (!categories.length) return emptyState('No categories are defined on this marketplace yet.');
  return `<ul class="chips">${categories
    .map(
      (c) =>
        `<li><a href="/console/catalog/categories/${encodeURIComponent(c.slug)}">${escapeHtml(c.name)}</a> <span class="muted">${c.api_count}</span></li>`,
    )
    .join('')}</ul>`;
}

async function catalogView(
  services: Services,
  ctx: AppContext,
  requestError?: { message: string; query: string },
): Promise<ConsoleView> {
  const query = formQuery(ctx);
  const categories = await services.listings.categories();
  let result: SearchResult | undefined;
  let searchError: string | undefined;
  try {
    result = await services.search.search(searchInput(query));
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    searchError = err.message;
  }
  const requests = await services.demand.list({ limit: 10, status: 'open' });
  let results: string;
  if (searchError) results = errorLine(searchError);
  else if (!result!.total) {
    results = emptyState(
      query.q
        ? `<p><strong>No API matches “${escapeHtml(query.q)}”.</strong></p><p>Try fewer words or another category, or request it below.</p>`
        : '<p><strong>No live APIs match these filters.</strong></p><p>Clear the filters, or request the API you need below.</p>',
    );
  } else {
    const from = result!.offset + 1;
    const to = result!.offset + result!.items.length;
    results = `<p role="status">${result!.total} API${result!.total === 1 ? '' : 's'} · showing ${from}–${to} · sorted by ${escapeHtml(SORT_LABELS[result!.sort])}</p>
${resultsTable(result!)}${pager('/console/catalog', query, result!)}`;
  }
  const requested = requests.length
    ? `<h3>Most requested</h3><ul>${requests.map((r) => `<li>${escapeHtml(r.query)} <span class="muted">(${r.votes} vote${r.votes === 1 ? '' : 's'})</span></li>`).join('')}</ul>`
    : '';
  return {
    section: 'catalog',
    title: 'Catalog',
    status: requestError ? 400 : searchError ? 400 : 200,
    banners: flash(ctx, FLASH),
    body: `${searchForm('/console/catalog', query, categories, true)}
<section aria-labelledby="results-h"><h2 id="results-h">Results</h2>${results}</section>
<section aria-labelledby="categories-h"><h2 id="categories-h">Categories</h2>${categoriesList(categories)}</section>
<section aria-labelledby="boards-h"><h2 id="boards-h">Leaderboards</h2>${boardsNav()}</section>
${requestForm(ctx, requestError?.query ?? query.q ?? '', requestError?.message)}
${requested}`,
  };
}

async function categoryView(services: Services, ctx: AppContext): Promise<ConsoleView> {
  const slug = paramOf(ctx, 'category');
  const categories = await services.listings.categories();
  const category = categories.find((c) => c.slug === slug);
  if (!category) throw new NotFoundError(`No category "${slug.slice(0, 64)}". The catalog lists the categories.`);
  const query = formQuery(ctx);
  const result = await services.search.search(searchInput(query, category.slug));
  const results = result.total
    ? `<p role="status">${result.total} API${result.total === 1 ? '' : 's'} in ${escapeHtml(category.name)}</p>${resultsTable(result)}${pager(`/console/catalog/categories/${encodeURIComponent(slug)}`, query, result)}`
    : emptyState(
        query.q
          ? `<p><strong>No API in ${escapeHtml(category.name)} matches “${escapeHtml(query.q)}”.</strong></p>`
          : `<p><strong>No live API in ${escapeHtml(category.name)} yet.</strong></p><p><a href="/console/catalog">Search the whole catalog</a> or <a href="/console/catalog#request-h">request an API</a>.</p>`,
      );
  return {
    section: 'catalog',
    title: category.name,
    body: `<p><a href="/console/catalog">← Catalog</a></p>
${searchForm(`/console/catalog/categories/${encodeURIComponent(slug)}`, query, categories, false)}
<section aria-labelledby="results-h"><h2 id="results-h">APIs in ${escapeHtml(category.name)}</h2>${results}</section>
<section aria-labelledby="boards-h"><h2 id="boards-h">Leaderboards in ${escapeHtml(category.name)}</h2>${boardsNav(undefined, category.slug)}</section>`,
  };
}

/** A board's metric, readable: money for GMV, a percentage for growth, else a plain number. */
function metricText(board: Board, value: number): string {
  if (board === 'top_grossing') return money(Math.round(value));
  if (board === 'trending') return `${(value * 100).toFixed(1)}%`;
  if (board === 'most_used') return Math.round(value).toLocaleString('en-US');
  return String(Math.round(value * 1000) / 1000);
}

async function leaderboardView(services: Services, ctx: AppContext): Promise<ConsoleView> {
  const query = formQuery(ctx);
  const boardName = paramOf(ctx, 'board');
  if (!(BOARDS as readonly string[]).includes(boardName)) {
    throw new NotFoundError(`No leaderboard "${boardName.slice(0, 64)}": use one of ${BOARDS.join(', ')}.`);
  }
  const board = boardName as Board;
  const categories = await services.listings.categories();
  const result = await services.market.leaderboard(board, { category: query.category, limit: 50 });
  const metric = BOARD_METRICS[board];
  const format = (v: number) => metricText(board, v);
  const rows = result.items
    .map(
      (i) =>
        `<tr><td class="num">${i.rank}</td><td>${listingLink(i.slug, i.name)}</td><td>${categoryLink(i.category)}</td><td>${escapeHtml(i.provider.name ?? '—')}</td><td class="num">${escapeHtml(format(i.metric.value))}</td></tr>`,
    )
    .join('');
  const table = result.items.length
    ? `${barChart([{ name: metric, points: result.items.slice(0, 10).map((i) => ({ label: i.name.slice(0, 18), value: i.metric.value })) }], { title: `${BOARD_LABELS[board]}: top ${Math.min(10, result.items.length)} by ${metric}`, format })}
<table><caption class="visually-hidden">${escapeHtml(BOARD_LABELS[board])}</caption><thead><tr><th scope="col" class="num">Rank</th><th scope="col">API</th><th scope="col">Category</th><th scope="col">Provider</th><th scope="col" class="num">${escapeHtml(metric)}</th></tr></thead><tbody>${rows}</tbody></table>`
    : emptyState(
        '<p><strong>No API is ranked on this board yet.</strong></p><p>Boards are recomputed from calls every few minutes; an API appears once it has traffic.</p>',
      );
  return {
    section: 'catalog',
    title: `Leaderboard: ${BOARD_LABELS[board]}`,
    body: `<p><a href="/console/catalog">← Catalog</a></p>
${boardsNav(board, query.category)}
<form class="filters" method="get" action="/console/catalog/leaderboards/${board}"><div><label for="category">Category</label><select id="category" name="category"><option value="">All categories</option>${options(
      categories.map((c) => ({ value: c.slug, label: c.name })),
      query.category,
    )}</select></div><div><button type="submit">Show</button></div></form>
<p class="muted">Ranked by <code>${escapeHtml(metric)}</code>.</p>
${table}`,
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

/** The catalog's pages: search, a category, a leaderboard, one listing. */
const PAGES: [string, (services: Services, ctx: AppContext) => Promise<ConsoleView>][] = [
  ['/console/catalog', catalogView],
  ['/console/catalog/categories/:category', categoryView],
  ['/console/catalog/leaderboards/:board', leaderboardView],
  ['/console/catalog/apis/:slug', listingView],
];

export function catalogConsole(services: Services, router: Router<AppState>): void {
  for (const [path, view] of PAGES)
    router.get(
      path,
      consolePage(services, 'catalog', (ctx) => view(services, ctx)),
    );
  router.post(
    '/console/catalog/requests',
    consolePage(services, 'catalog', (ctx, person) => requestApi(services, ctx, person)),
  );
}
