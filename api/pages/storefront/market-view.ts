/**
 * `/market`: the public market overview (GET /v1/market/overview's service) with links to the boards and categories;
 * the activity feed, which the spec keeps behind authentication, only for a signed-in person.
 */
import type { ActivityItem } from '../../../core/catalog/rollups/rollups.schemas.js';
import { escapeHtml } from '../../../core/html.js';
import type { Services } from '../../../platform/services.js';
import { when } from '../console/forms.js';
import type { StorefrontView, Viewer } from './frame.js';
import { categoriesList, boardsNav } from './search-view.js';
import { emptyState, money, STOREFRONT } from './site.js';

function activityText(a: ActivityItem): string {
  const api = `<a href="${STOREFRONT.listing(a.api.slug)}">${escapeHtml(a.api.name)}</a>`;
  switch (a.kind) {
    case 'publish':
      return `${api} was published`;
    case 'new_provider':
      return `A new provider, ${escapeHtml(a.provider.name ?? a.provider.slug ?? 'unnamed')}, published ${api}`;
    case 'price_change':
      return `${api}: ${escapeHtml(a.method)} ${escapeHtml(a.path)} from ${money(a.from_price_cents)} to ${money(a.to_price_cents)}`;
    case 'mover':
      return `${api} moved from #${a.from_rank} to #${a.to_rank} on ${escapeHtml(a.board)}`;
  }
}

async function activitySection(services: Services, viewer: Viewer): Promise<string> {
  if (!viewer.person) {
    return `<p><a href="/login?next=%2Fmarket">Sign in</a> to see the activity feed: publishes, new providers, price changes and board movers.</p>`;
  }
  const items = await services.market.activity({ limit: 30 });
  if (!items.length) return emptyState('<p>Nothing has happened on the market yet.</p>');
  return `<ul>${items.map((a) => `<li><span class="muted">${escapeHtml(when(a.at))}</span> ${activityText(a)}</li>`).join('')}</ul>`;
}

export async function marketView(services: Services, viewer: Viewer): Promise<StorefrontView> {
  const [o, categories, activity] = await Promise.all([
    services.market.overview(),
    services.listings.categories(),
    activitySection(services, viewer),
  ]);
  const card = (label: string, value: string) =>
    `<div class="card"><div class="muted">${label}</div><div class="figure">${value}</div></div>`;
  return {
    title: 'Market',
    head: { description: 'The market at a glance: live APIs, providers, calls and GMV.', canonical: '/market' },
    body: `<div class="cards">
${card('Live APIs', o.live_apis.toLocaleString('en-US'))}${card('Providers', o.providers.toLocaleString('en-US'))}${card('Categories', String(o.categories))}
${card('Calls, 24 hours', o.calls_24h.toLocaleString('en-US'))}${card('Calls, 7 days', o.calls_7d.toLocaleString('en-US'))}
${card('GMV, 24 hours', money(o.gmv_cents_24h))}${card('GMV, 7 days', money(o.gmv_cents_7d))}
${card('Active consumers, 7 days', o.active_consumers_7d.toLocaleString('en-US'))}${card('Median price per call', o.median_price_cents == null ? '—' : money(o.median_price_cents))}
</div>
<p class="muted">${o.updated_at ? `Usage counted up to ${escapeHtml(when(o.updated_at))}.` : 'Usage is not counted yet: the rollups run every 30 seconds.'}</p>
<section aria-labelledby="boards-h"><h2 id="boards-h">Leaderboards</h2>${boardsNav(STOREFRONT)}<p><a href="/leaderboards">All six boards</a></p></section>
<section aria-labelledby="categories-h"><h2 id="categories-h">Categories</h2>${categoriesList(STOREFRONT, categories)}</section>
<section aria-labelledby="activity-h"><h2 id="activity-h">Activity</h2>${activity}</section>`,
  };
}
