/**
 * What the catalog's console pages share (catalog.page.ts, catalog-listing.page.ts): the boards' names, links to a
 * listing and a category, and a price range as text.
 */
import type { Board } from '../../../core/catalog/rollups/rollups.scoring.js';
import { escapeHtml } from '../../../core/html.js';
import { money } from './shell.js';

export const BOARD_LABELS: Record<Board, string> = {
  top_grossing: 'Top grossing',
  most_used: 'Most used',
  most_reliable: 'Most reliable',
  best_value: 'Best value',
  trending: 'Trending',
  new_rising: 'New and rising',
};

export const listingLink = (slug: string, name: string) =>
  `<a href="/console/catalog/apis/${encodeURIComponent(slug)}">${escapeHtml(name)}</a>`;

export const categoryLink = (c: { slug: string; name: string } | null) =>
  c ? `<a href="/console/catalog/categories/${encodeURIComponent(c.slug)}">${escapeHtml(c.name)}</a>` : '—';

export function priceRange(p: {
  min_price_cents: number | null;
  max_price_cents: number | null;
  free: boolean;
}): string {
  if (p.min_price_cents == null) return '—';
  if (p.max_price_cents === 0) return 'Free';
  if (p.min_price_cents === p.max_price_cents) return `${money(p.min_price_cents)} / call`;
  return `${p.min_price_cents === 0 ? 'Free' : money(p.min_price_cents)} – ${money(p.max_price_cents ?? 0)} / call`;
}
