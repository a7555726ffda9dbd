/**
 * The catalog's search page, one implementation for the storefront (`/apis`, `/categories/{slug}`) and the console
 * (`/console/catalog…`): the same hybrid search as GET /v1/search (core/catalog/search), filters (words, category,
 * callable only, free or paid, a price range in dollars over the cheapest paid endpoint), every sort, a page size and
 * previous / next links that keep the filters. Totals and paging follow the result window (docs/decisions.md, issue
 * 33): "10,000+ APIs" when the total is a lower bound, no link past the first 10,000 results.
 */
import {
  SEARCH_PRICING,
  SEARCH_SORTS,
  SEARCH_WINDOW,
  SearchQuery,
  type SearchSort,
} from '../../../core/catalog/search/search.schemas.js';
import type { CategoryView } from '../../../core/catalog/listings/listings.schemas.js';
import type { SearchResult } from '../../../core/catalog/search/search.service.js';
import { AppError, NotFoundError, ValidationError } from '../../../core/errors.js';
import { escapeHtml } from '../../../core/html.js';
import { BOARDS } from '../../../core/catalog/rollups/rollups.scoring.js';
import type { Services } from '../../../platform/services.js';
import { dollarsToCents, options } from '../console/provider-forms.js';
import { FormError } from '../form-errors.js';
import { errorLine, parseForm } from '../forms.js';
import {
  BOARD_LABELS,
  categoryLink,
  emptyState,
  listingLink,
  plural,
  priceRange,
  providerName,
  type CatalogSite,
} from './site.js';

export const SORT_LABELS: Record<SearchSort, string> = {
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

const PRICING_LABELS = { free: 'Free only', paid: 'Paid only' } as const;
const PAGE_SIZES = [10, 25, 50, 100];

/** The search's input from a page's query: prices in dollars (`min_price`, `max_price`), 25 a page by default. */
export function searchInput(query: Record<string, string>, category?: string): SearchQuery {
  const { min_price, max_price, done: _done, ...rest } = query;
  const min = min_price !== undefined ? dollarsToCents(min_price, 'min_price') : undefined;
  const max = max_price !== undefined ? dollarsToCents(max_price, 'max_price') : undefined;
  if (min !== undefined && max !== undefined && min > max) {
    throw new ValidationError('min_price: the lowest price is above the highest; swap them or clear one.', {
      details: { field: 'min_price' },
    });
  }
  return parseForm(SearchQuery, {
    limit: '25',
    ...rest,
    ...(category ? { category } : {}),
    ...(min !== undefined ? { min_price_cents: min } : {}),
    ...(max !== undefined ? { max_price_cents: max } : {}),
  });
}

function resultsTable(site: CatalogSite, result: SearchResult): string {
  const rows = result.items
    .map(
      (i) => `<tr><td>${listingLink(site, i.slug, i.name)}<br><span class="muted">${escapeHtml(i.summary)}</span></td>
<td>${categoryLink(site, i.category)}</td><td>${escapeHtml(priceRange(i.price))}</td>
<td class="num">${i.svc_score}</td><td>${providerName(i.provider)}${i.callable ? '' : '<br><span class="muted">Directory entry: not callable</span>'}</td></tr>`,
    )
    .join('');
  return `<table><caption class="visually-hidden">Search results</caption>
<thead><tr><th scope="col">API</th><th scope="col">Category</th><th scope="col">Price</th><th scope="col" class="num">SVC score</th><th scope="col">Provider</th></tr></thead>
<tbody>${rows}</tbody></table>`;
}

const WINDOW_TEXT = SEARCH_WINDOW.toLocaleString('en-US');
const REFINE = 'more words, a category, a price range or callable only';

/** "1,706 APIs", or "10,000+ APIs" when there are more than the window holds (`total` is then a lower bound). */
export function totalLine(result: Pick<SearchResult, 'total' | 'total_exact'>): string {
  const n = `${result.total.toLocaleString('en-US')}${result.total_exact ? '' : '+'}`;
  return `${n} API${result.total === 1 && result.total_exact ? '' : 's'}`;
}

/**
 * Previous / next links that keep the other filters, never past the window (a last page cut short at its edge); at
 * the window's end of more results than it holds, a note to refine the search.
 */
function pager(base: string, query: Record<string, string>, result: SearchResult): string {
  const link = (params: Record<string, string>, label: string, rel: string) =>
    `<a rel="${rel}" href="${base}?${escapeHtml(new URLSearchParams({ ...query, ...params }).toString())}">${label}</a>`;
  const parts: string[] = [];
  if (result.offset > 0) {
    parts.push(link({ offset: String(Math.max(0, result.offset - result.limit)) }, '← Previous', 'prev'));
  }
  const next = result.offset + result.limit;
  if (next < result.total && next < SEARCH_WINDOW) {
    const limit = Math.min(result.limit, SEARCH_WINDOW - next);
    parts.push(
      link({ offset: String(next), ...(limit < result.limit ? { limit: String(limit) } : {}) }, 'Next →', 'next'),
    );
  }
  const nav = parts.length ? `<nav aria-label="Result pages"><p>${parts.join(' · ')}</p></nav>` : '';
  const end =
    !result.total_exact && next >= SEARCH_WINDOW
      ? `<p class="muted">Showing the first ${WINDOW_TEXT} results only: refine your search (${REFINE}) to see the others.</p>`
      : '';
  return nav + end;
}

/** A page asked for past the window (a hand-made or old link): a 400 saying what to do, not the schema's words. */
function pastWindow(site: CatalogSite, base: string, query: Record<string, string>): string | undefined {
  const offset = Number(query.offset ?? 0);
  const limit = Number(query.limit ?? 25);
  if (!Number.isInteger(offset) || !Number.isInteger(limit) || offset + limit <= SEARCH_WINDOW) return undefined;
  const { offset: _offset, ...rest } = query;
  const kept = new URLSearchParams(rest).toString();
  const first = kept ? `${base}?${escapeHtml(kept)}` : base;
  return `${errorLine(`Only the first ${WINDOW_TEXT} results can be paged through: this page goes past them. Refine your search (${REFINE}) to see the others.`)}
<p><a href="${first}">Back to the first page</a> · <a href="${site.search}">Search the whole catalog</a></p>`;
}

const select = (id: string, label: string, any: string, items: { value: string; label: string }[], v?: string) =>
  `<div><label for="${id}">${label}</label><select id="${id}" name="${id}"><option value="">${any}</option>${options(items, v)}</select></div>`;

export function searchForm(
  action: string,
  query: Record<string, string>,
  categories: readonly CategoryView[],
  withCategory: boolean,
): string {
  const category = withCategory
    ? select(
        'category',
        'Category',
        'Any category',
        categories.map((c) => ({ value: c.slug, label: `${c.name} (${c.api_count})` })),
        query.category,
      )
    : '';
  const price = (id: string, label: string) =>
    `<div><label for="${id}">${label}</label><input id="${id}" name="${id}" inputmode="decimal" size="7" value="${escapeHtml(query[id] ?? '')}"></div>`;
  return `<form class="filters" method="get" action="${action}" role="search">
<div><label for="q">Search</label><input id="q" name="q" type="search" value="${escapeHtml(query.q ?? '')}" placeholder="weather forecast, geocoding…" size="30"></div>
${category}
${select(
  'sort',
  'Sort by',
  // What no choice sorts by (the search's default), named as the results line names it.
  `Default (${SORT_LABELS[query.q?.trim() ? 'relevance' : 'svc_score']})`,
  SEARCH_SORTS.map((s) => ({ value: s, label: SORT_LABELS[s] })),
  query.sort,
)}
${select(
  'pricing',
  'Free or paid',
  'Free and paid',
  SEARCH_PRICING.map((p) => ({ value: p, label: PRICING_LABELS[p] })),
  query.pricing,
)}
${price('min_price', 'Min price per call ($)')}
${price('max_price', 'Max price per call ($)')}
<div><label><input type="checkbox" name="callable" value="true"${query.callable === 'true' ? ' checked' : ''}> Callable only</label></div>
<div><label for="limit">Per page</label><select id="limit" name="limit">${options(
    PAGE_SIZES.map((n) => ({ value: String(n), label: String(n) })),
    query.limit ?? '25',
  )}</select></div>
<div><button type="submit">Search</button></div>
</form>
<p class="muted">Prices compare each API's cheapest paid endpoint; an API whose endpoints are all free counts as $0.00.</p>`;
}

export function boardsNav(site: CatalogSite, current?: string, category?: string | null): string {
  return `<ul class="chips">${BOARDS.map(
    (b) =>
      `<li><a href="${site.leaderboard(b, category)}"${b === current ? ' aria-current="page"' : ''}>${escapeHtml(BOARD_LABELS[b])}</a></li>`,
  ).join('')}</ul>`;
}

export function categoriesList(site: CatalogSite, categories: readonly CategoryView[]): string {
  if (!categories.length) return emptyState('No categories are defined on this marketplace yet.');
  return `<ul class="chips">${categories
    .map(
      (c) =>
        `<li><a href="${site.category(c.slug)}">${escapeHtml(c.name)}</a> <span class="muted">${c.api_count}</span></li>`,
    )
    .join('')}</ul>`;
}

/** The search's results (or the refusal of its filters, as a 400 with the message) for `base`'s page. */
export async function searchResults(
  services: Services,
  site: CatalogSite,
  base: string,
  query: Record<string, string>,
  category?: CategoryView,
): Promise<{ html: string; status: number }> {
  let result: SearchResult;
  try {
    result = await services.search.search(searchInput(query, category?.slug));
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    const past =
      err instanceof FormError && err.fields.offset !== undefined ? pastWindow(site, base, query) : undefined;
    return { html: past ?? errorLine(err.message), status: err.status };
  }
  if (!result.total) {
    const where = category ? ` in ${escapeHtml(category.name)}` : '';
    const filtered = Object.keys(query).some((k) => !['limit', 'offset', 'sort'].includes(k));
    const html = query.q
      ? `<p><strong>No API${where} matches “${escapeHtml(query.q)}”.</strong></p><p>Try fewer words or another category, or request it.</p>`
      : category && !filtered
        ? `<p><strong>No live API${where} yet.</strong></p><p><a href="${site.search}">Search the whole catalog</a> or request an API.</p>`
        : `<p><strong>No live API${where} matches these filters.</strong></p><p><a href="${site.search}">Search the whole catalog</a>, clear the filters, or request the API you need.</p>`;
    return { html: emptyState(html), status: 200 };
  }
  const from = (result.offset + 1).toLocaleString('en-US');
  const to = (result.offset + result.items.length).toLocaleString('en-US');
  return {
    html: `<p role="status">${totalLine(result)} · showing ${from}–${to} · sorted by ${escapeHtml(SORT_LABELS[result.sort])}</p>
${resultsTable(site, result)}${pager(base, query, result)}`,
    status: 200,
  };
}

/** The search page's body: the form, the results, the categories and the boards. */
export async function searchPage(
  services: Services,
  site: CatalogSite,
  query: Record<string, string>,
): Promise<{ body: string; status: number }> {
  const categories = await services.listings.categories();
  const results = await searchResults(services, site, site.search, query);
  return {
    status: results.status,
    body: `${searchForm(site.search, query, categories, true)}
<section aria-labelledby="results-h"><h2 id="results-h">Results</h2>${results.html}</section>
<section aria-labelledby="categories-h"><h2 id="categories-h">Categories</h2>${categoriesList(site, categories)}</section>
<section aria-labelledby="boards-h"><h2 id="boards-h">Leaderboards</h2>${boardsNav(site)}</section>`,
  };
}

/** A category's page: the same search fixed to it, and its leaderboards. */
export async function categoryPage(
  services: Services,
  site: CatalogSite,
  slug: string,
  query: Record<string, string>,
): Promise<{ title: string; body: string; status: number; category: CategoryView }> {
  const categories = await services.listings.categories();
  const category = categories.find((c) => c.slug === slug);
  if (!category) throw new NotFoundError(`No category "${slug.slice(0, 64)}". The catalog lists the categories.`);
  const base = site.category(slug);
  const results = await searchResults(services, site, base, query, category);
  return {
    title: category.name,
    category,
    status: results.status,
    body: `<p><a href="${site.search}">← All APIs</a> · ${plural(category.api_count, 'live API')}</p>
${searchForm(base, query, categories, false)}
<section aria-labelledby="results-h"><h2 id="results-h">APIs in ${escapeHtml(category.name)}</h2>${results.html}</section>
<section aria-labelledby="boards-h"><h2 id="boards-h">Leaderboards in ${escapeHtml(category.name)}</h2>${boardsNav(site, undefined, category.slug)}</section>`,
  };
}
