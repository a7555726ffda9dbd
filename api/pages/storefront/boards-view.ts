/**
 * The leaderboards (GET /v1/leaderboards/{board} over the rollups), one implementation for the storefront and the
 * console: all six boards side by side (overall, or in one category), and one board in full with a chart of its top 10.
 */
import { BOARD_METRICS, BOARDS, type Board } from '../../../core/catalog/rollups/rollups.scoring.js';
import type { Leaderboard } from '../../../core/catalog/rollups/rollups.schemas.js';
import { NotFoundError } from '../../../core/errors.js';
import { escapeHtml } from '../../../core/html.js';
import type { Services } from '../../../platform/services.js';
import { barChart } from '../charts.js';
import { options } from '../console/provider-forms.js';
import { boardsNav } from './search-view.js';
import { BOARD_LABELS, categoryLink, emptyState, listingLink, money, providerName, type CatalogSite } from './site.js';

/** A board's metric, readable: money for GMV, a percentage for growth, else a plain number. */
export function metricText(board: Board, value: number): string {
  if (board === 'top_grossing') return money(Math.round(value));
  if (board === 'trending') return `${(value * 100).toFixed(1)}%`;
  if (board === 'most_used') return Math.round(value).toLocaleString('en-US');
  return String(Math.round(value * 1000) / 1000);
}

/** Each board's metric for people: a column header, and what "ranked by" means (the field name follows in code). */
const METRIC_WORDS: Record<Board, { header: string; ranked: string }> = {
  top_grossing: { header: 'GMV, 30 days', ranked: 'the GMV of successful calls over 30 days' },
  most_used: { header: 'Successful calls, 30 days', ranked: 'successful calls over 30 days' },
  most_reliable: {
    header: 'Reliability',
    ranked: 'the lower bound (Wilson, 95%) of the success rate, from 20 judged calls in 30 days',
  },
  best_value: {
    header: 'Reliability per cent',
    ranked: 'that reliability divided by the cheapest paid price in cents (free counts as 1 cent)',
  },
  trending: { header: 'Growth, 7 days', ranked: 'the growth of calls over the last 7 days against the 7 before' },
  new_rising: { header: 'Calls per day', ranked: 'calls per day of APIs published in the last 30 days' },
};

const rankedBy = (board: Board) =>
  `<p class="muted">Ranked by ${METRIC_WORDS[board].ranked} (<code>${escapeHtml(BOARD_METRICS[board])}</code>).</p>`;

const NOT_RANKED =
  '<p><strong>No API is ranked on this board yet.</strong></p><p>Boards are recomputed from calls every few minutes; an API appears once it has traffic.</p>';

function categoryFilter(action: string, categories: { slug: string; name: string }[], current?: string): string {
  return `<form class="filters" method="get" action="${action}"><div><label for="category">Category</label><select id="category" name="category"><option value="">All categories</option>${options(
    categories.map((c) => ({ value: c.slug, label: c.name })),
    current,
  )}</select></div><div><button type="submit">Show</button></div></form>`;
}

/** A board's table; `compact` (the six side by side) leaves category and provider to the board's own page. */
function boardTable(site: CatalogSite, board: Board, result: Leaderboard, caption: string, compact = false): string {
  const rows = result.items
    .map(
      (i) =>
        `<tr><td class="num">${i.rank}</td><td>${listingLink(site, i.slug, i.name)}</td>${compact ? '' : `<td>${categoryLink(site, i.category)}</td><td>${providerName(i.provider)}</td>`}<td class="num">${escapeHtml(metricText(board, i.metric.value))}</td></tr>`,
    )
    .join('');
  const more = compact ? '' : '<th scope="col">Category</th><th scope="col">Provider</th>';
  return `<table><caption class="visually-hidden">${escapeHtml(caption)}</caption><thead><tr><th scope="col" class="num">Rank</th><th scope="col">API</th>${more}<th scope="col" class="num">${escapeHtml(METRIC_WORDS[board].header)}</th></tr></thead><tbody>${rows}</tbody></table>`;
}

async function knownCategory(services: Services, slug: string | undefined) {
  const categories = await services.listings.categories();
  if (slug && !categories.some((c) => c.slug === slug)) {
    throw new NotFoundError(`No category "${slug.slice(0, 64)}". The catalog lists the categories.`);
  }
  return { categories, category: categories.find((c) => c.slug === slug) };
}

/** Every board, its top 10, overall or in `query.category`. */
export async function leaderboardsPage(
  services: Services,
  site: CatalogSite,
  query: Record<string, string>,
): Promise<{ title: string; body: string }> {
  const { categories, category } = await knownCategory(services, query.category);
  const boards = await Promise.all(
    BOARDS.map((b) => services.market.leaderboard(b, { category: category?.slug, limit: 10 })),
  );
  const sections = BOARDS.map((b, i) => {
    const result = boards[i]!;
    const table = result.items.length
      ? boardTable(site, b, result, BOARD_LABELS[b], true)
      : emptyState('<p>No API is ranked on this board yet.</p>');
    return `<section aria-labelledby="board-${b}"><h2 id="board-${b}"><a href="${site.leaderboard(b, category?.slug)}">${escapeHtml(BOARD_LABELS[b])}</a></h2>
${rankedBy(b)}${table}</section>`;
  }).join('\n');
  return {
    title: category ? `Leaderboards in ${category.name}` : 'Leaderboards',
    body: `<p>The six boards, recomputed from calls every few minutes${category ? '' : ': overall, or pick a category'}.</p>
${categoryFilter(site.leaderboards, categories, category?.slug)}
<div class="boards">${sections}</div>`,
  };
}

/** One board in full (top 50) with a chart of its top 10. */
export async function leaderboardPage(
  services: Services,
  site: CatalogSite,
  boardName: string,
  query: Record<string, string>,
): Promise<{ title: string; body: string; board: Board }> {
  if (!(BOARDS as readonly string[]).includes(boardName)) {
    throw new NotFoundError(`No leaderboard "${boardName.slice(0, 64)}": use one of ${BOARDS.join(', ')}.`);
  }
  const board = boardName as Board;
  const { categories, category } = await knownCategory(services, query.category);
  const result = await services.market.leaderboard(board, { category: category?.slug, limit: 50 });
  const metric = METRIC_WORDS[board].header;
  const format = (v: number) => metricText(board, v);
  const table = result.items.length
    ? `${barChart([{ name: metric, points: result.items.slice(0, 10).map((i) => ({ label: i.name.slice(0, 18), value: i.metric.value })) }], { title: `${BOARD_LABELS[board]}: top ${Math.min(10, result.items.length)} by ${metric}`, format })}
${boardTable(site, board, result, BOARD_LABELS[board])}`
    : emptyState(NOT_RANKED);
  return {
    board,
    title: `Leaderboard: ${BOARD_LABELS[board]}${category ? ` in ${category.name}` : ''}`,
    body: `<p><a href="${site.leaderboards}${category ? `?category=${encodeURIComponent(category.slug)}` : ''}">← All leaderboards</a></p>
${boardsNav(site, board, category?.slug)}
${categoryFilter(site.leaderboard(board), categories, category?.slug)}
${rankedBy(board)}
${table}`,
  };
}
