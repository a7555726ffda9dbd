/**
 * Where the catalog views link (issue 31: one implementation, two frames): the public storefront (`/apis`,
 * `/categories/…`, `/leaderboards`) and the console's catalog section (`/console/catalog/…`, the same views in the
 * console's frame with the person's keys). Provider profiles and the market page are public in both. Also the small
 * pieces every catalog view writes: the boards' names, links to a listing, category and provider, a price range.
 */
import type { Board } from '../../../core/catalog/rollups/rollups.scoring.js';
import { escapeHtml } from '../../../core/html.js';
import { money } from '../console/shell.js';

export interface CatalogSite {
  /** The search page. */
  search: string;
  listing(slug: string): string;
  quote(slug: string): string;
  category(slug: string): string;
  leaderboards: string;
  leaderboard(board: string, category?: string | null): string;
}

const q = (category?: string | null) => (category ? `?category=${encodeURIComponent(category)}` : '');

export const STOREFRONT: CatalogSite = {
  search: '/apis',
  listing: (slug) => `/apis/${encodeURIComponent(slug)}`,
  quote: (slug) => `/apis/${encodeURIComponent(slug)}/quote`,
  category: (slug) => `/categories/${encodeURIComponent(slug)}`,
  leaderboards: '/leaderboards',
  leaderboard: (board, category) => `/leaderboards/${encodeURIComponent(board)}${q(category)}`,
};

export const CONSOLE_CATALOG: CatalogSite = {
  search: '/console/catalog',
  listing: (slug) => `/console/catalog/apis/${encodeURIComponent(slug)}`,
  quote: (slug) => `/console/catalog/apis/${encodeURIComponent(slug)}/quote`,
  category: (slug) => `/console/catalog/categories/${encodeURIComponent(slug)}`,
  leaderboards: '/console/catalog/leaderboards',
  leaderboard: (board, category) => `/console/catalog/leaderboards/${encodeURIComponent(board)}${q(category)}`,
};

export const BOARD_LABELS: Record<Board, string> = {
  top_grossing: 'Top grossing',
  most_used: 'Most used',
  most_reliable: 'Most reliable',
  best_value: 'Best value',
  trending: 'Trending',
  new_rising: 'New and rising',
};

export const providerPath = (slug: string) => `/providers/${encodeURIComponent(slug)}`;

export const listingLink = (site: CatalogSite, slug: string, name: string) =>
  `<a href="${site.listing(slug)}">${escapeHtml(name)}</a>`;

export const categoryLink = (site: CatalogSite, c: { slug: string; name: string } | null) =>
  c ? `<a href="${site.category(c.slug)}">${escapeHtml(c.name)}</a>` : '—';

/** A provider's name in a table of listings: text, not a link (a provider often shares its API's name, and two links
 * of one name in a row read as one; the listing's page links the profile). */
export const providerName = (p: { slug: string | null; name: string | null }) => escapeHtml(p.name ?? p.slug ?? '—');

/** The provider's public profile link, or its name (no profile slug: no page). */
export const providerLink = (p: { slug: string | null; name: string | null }) =>
  p.slug ? `<a href="${providerPath(p.slug)}">${escapeHtml(p.name ?? p.slug)}</a>` : escapeHtml(p.name ?? '—');

export function priceRange(p: { min_price_cents: number | null; max_price_cents: number | null }): string {
  if (p.min_price_cents == null) return '—';
  if (p.max_price_cents === 0) return 'Free';
  if (p.min_price_cents === p.max_price_cents) return `${money(p.min_price_cents)} / call`;
  return `${p.min_price_cents === 0 ? 'Free' : money(p.min_price_cents)} – ${money(p.max_price_cents ?? 0)} / call`;
}

/** A provider-written URL as a link target only when it is http(s) (a `javascript:` URL is never a link). */
export const webUrl = (url: string | null | undefined): string | undefined =>
  url && /^https?:\/\//i.test(url) ? url : undefined;

/** A clear empty state: what is missing and what to do next. */
/** A provider's plain text with its `code` spans set as code (the one bit of Markdown descriptions often carry). */
export const withCodeSpans = (text: string) => escapeHtml(text).replace(/`([^`\n]+)`/g, '<code>$1</code>');

export const emptyState = (html: string) => `<div class="empty">${html}</div>`;

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export { money };
