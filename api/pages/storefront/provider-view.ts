/**
 * `/providers/{slug}`: a provider's public profile (GET /v1/providers/{slug}'s service): name, avatar, bio and
 * website, trust badges, 30-day stats and their live APIs, with an `Organization` in JSON-LD.
 */
import { escapeHtml } from '../../../core/html.js';
import type { ProviderDetail } from '../../../core/profiles/profiles.schemas.js';
import type { Services } from '../../../platform/services.js';
import { when } from '../console/forms.js';
import type { StorefrontView } from './frame.js';
import { organizationJsonLd } from './json-ld.js';
import { emptyState, plural, providerPath, STOREFRONT, withCodeSpans } from './site.js';

const BADGE_TEXT: Record<ProviderDetail['badges'][number], string> = {
  verified_email: 'Verified email',
  connect_enabled: 'Payouts set up',
  verified_upstream: 'Upstream verified',
};

/** The provider's live APIs, each category by its name (the profile carries its slug). */
function apisList(p: ProviderDetail, categoryNames: ReadonlyMap<string, string>): string {
  if (!p.apis.length) return emptyState('<p>No live API yet.</p>');
  const rows = p.apis
    .map(
      (a) =>
        `<tr><td><a href="${STOREFRONT.listing(a.slug)}">${escapeHtml(a.name)}</a><br><span class="muted">${escapeHtml(a.summary)}</span></td><td>${a.category ? `<a href="${STOREFRONT.category(a.category)}">${escapeHtml(categoryNames.get(a.category) ?? a.category)}</a>` : '—'}</td><td>${escapeHtml(when(a.published_at))}</td></tr>`,
    )
    .join('');
  return `<table><caption class="visually-hidden">Live APIs</caption><thead><tr><th scope="col">API</th><th scope="col">Category</th><th scope="col">Published</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export async function providerView(services: Services, slug: string): Promise<StorefrontView> {
  const [p, categories] = await Promise.all([services.providerDirectory.get(slug), services.listings.categories()]);
  const categoryNames = new Map(categories.map((c) => [c.slug, c.name]));
  const name = p.display_name ?? p.slug;
  const page = providerPath(p.slug);
  const badges = p.badges.length
    ? `<ul class="chips" aria-label="Trust badges">${p.badges.map((b) => `<li><span class="badge">${BADGE_TEXT[b]}</span></li>`).join('')}</ul>`
    : '<p class="muted">No trust badges yet.</p>';
  const rate = p.stats.success_rate_30d == null ? '—' : `${(p.stats.success_rate_30d * 100).toFixed(1)}%`;
  const card = (label: string, value: string) =>
    `<div class="card"><div class="muted">${label}</div><div class="figure">${value}</div></div>`;
  return {
    title: name,
    head: {
      description: p.bio ?? `${name}: ${plural(p.stats.live_apis, 'live API')} on this marketplace.`,
      canonical: page,
      ogType: 'profile',
      jsonLd: [organizationJsonLd(p, { publicBase: services.config.urls.publicBase, page })],
    },
    body: `<div class="provider-head">${p.avatar_url ? `<img src="${escapeHtml(p.avatar_url)}" alt="${escapeHtml(name)} logo">` : ''}<div>
${p.bio ? `<p>${withCodeSpans(p.bio)}</p>` : ''}
${p.website ? `<p><a href="${escapeHtml(p.website)}" rel="noopener noreferrer nofollow">${escapeHtml(p.website)}</a></p>` : ''}</div></div>
${badges}
<div class="cards">${card('Live APIs', String(p.stats.live_apis))}${card('Calls, 30 days', p.stats.calls_30d.toLocaleString('en-US'))}${card('Success rate, 30 days', rate)}</div>
<section aria-labelledby="apis-h"><h2 id="apis-h">Live APIs</h2>${apisList(p, categoryNames)}</section>`,
  };
}
