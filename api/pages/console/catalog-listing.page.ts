/**
 * Console · Catalog · one listing (GET /v1/apis/{slug}, its stats, history and ranks): the figures, endpoints and
 * prices with scheduled changes and discounts, calls and score charts, stats per period, ranks, and the terms.
 */
import type { Board } from '../../../core/catalog/rollups/rollups.scoring.js';
import type { ListingDetail } from '../../../core/catalog/listings/listings.schemas.js';
import { escapeHtml } from '../../../core/html.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext } from '../../context.js';
import { barChart, lineChart } from '../charts.js';
import { paramOf } from '../forms.js';
import { BOARD_LABELS, categoryLink, priceRange } from './catalog-common.js';
import { when } from './forms.js';
import { emptyState, money, type ConsoleView } from './shell.js';

function endpointsTable(detail: ListingDetail): string {
  if (!detail.endpoints.length) return emptyState('This API lists no endpoints.');
  const rows = detail.endpoints
    .map((e) => {
      const discount = e.discount
        ? `<br><span class="ok">${escapeHtml(e.discount.label ?? 'Discount')}: −${money(e.discount.off_cents)}</span>`
        : '';
      const scheduled = e.price_increase
        ? `${money(e.price_increase.price_cents)} from ${escapeHtml(when(e.price_increase.effective_at))}`
        : '—';
      return `<tr><td><code>${escapeHtml(e.method)}</code></td><td><code>${escapeHtml(e.path)}</code>${e.summary ? `<br><span class="muted">${escapeHtml(e.summary)}</span>` : ''}</td>
<td class="num">${e.free ? 'Free' : money(e.price_cents_effective)}${e.price_cents !== e.price_cents_effective ? ` <s>${money(e.price_cents)}</s>` : ''}${discount}</td><td>${scheduled}</td></tr>`;
    })
    .join('');
  return `<table><caption class="visually-hidden">Endpoints and prices</caption><thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col" class="num">Price per call</th><th scope="col">Scheduled change</th></tr></thead><tbody>${rows}</tbody></table>`;
}

type Stats = Awaited<ReturnType<Services['listings']['stats']>>;
type History = Awaited<ReturnType<Services['listings']['history']>>;
type Ranks = Awaited<ReturnType<Services['listings']['ranks']>>;

/** Calls per period and the score per day as charts, and the stats per period as a table. */
function statsSection(windows: readonly (readonly [string, Stats])[], history: History): string {
  const callsChart = barChart(
    [
      { name: 'Calls', points: windows.map(([label, s]) => ({ label, value: s.calls })) },
      { name: 'Successful', points: windows.map(([label, s]) => ({ label, value: s.successes })) },
    ],
    { title: 'Calls by period', empty: 'No calls yet: the chart fills in once consumers call this API.' },
  );
  const scoreChart = lineChart(
    [{ name: 'SVC score', points: history.map((h) => ({ label: h.day, value: h.svc_score })) }],
    {
      title: 'SVC score per day',
      empty: 'No score history yet: scores are recorded once a day.',
    },
  );
  const statsRows = windows
    .map(
      ([label, s]) =>
        `<tr><th scope="row">${label}</th><td class="num">${s.calls}</td><td class="num">${s.success_rate == null ? '—' : `${(s.success_rate * 100).toFixed(1)}%`}</td><td class="num">${s.latency_ms.p50 ?? '—'}</td><td class="num">${s.latency_ms.p95 ?? '—'}</td><td class="num">${money(s.gmv_cents)}</td><td class="num">${s.unique_consumers}</td></tr>`,
    )
    .join('');
  return `<div class="charts">${callsChart}${scoreChart}</div>
<table><caption class="visually-hidden">Stats by period</caption><thead><tr><th scope="col">Period</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Success rate</th><th scope="col" class="num">p50 ms</th><th scope="col" class="num">p95 ms</th><th scope="col" class="num">GMV</th><th scope="col" class="num">Consumers</th></tr></thead><tbody>${statsRows}</tbody></table>`;
}

function termsSection(detail: ListingDetail, slug: string): string {
  return detail.terms.documents.length
    ? `<ul>${detail.terms.documents.map((d) => `<li>${escapeHtml(d.title ?? d.kind)} <span class="muted">(${escapeHtml(d.kind)}, version ${escapeHtml(d.version)}, ${escapeHtml(d.acceptance_mode)})</span></li>`).join('')}</ul>
<p><a href="/terms/${encodeURIComponent(slug)}">Read and accept the terms</a>${detail.terms.required ? ' (required before calling)' : ''}</p>`
    : `<p>This API has no terms of its own. <a href="/terms/${encodeURIComponent(slug)}">Terms page</a></p>`;
}

function ranksSection(ranks: Ranks): string {
  const ranked = ranks.filter((r) => r.rank !== null);
  return ranked.length
    ? `<ul>${ranked.map((r) => `<li><a href="/console/catalog/leaderboards/${encodeURIComponent(r.board)}${r.category ? `?category=${encodeURIComponent(r.category)}` : ''}">${escapeHtml(BOARD_LABELS[r.board as Board] ?? r.board)}</a>${r.category ? ` in ${escapeHtml(r.category)}` : ''}: #${r.rank} of ${r.board_size}</li>`).join('')}</ul>`
    : '<p class="muted">Not ranked on any board yet.</p>';
}

/** The summary, the four figures, tags, and where to call it (or why it is not callable here). */
function listingHeader(detail: ListingDetail, slug: string): string {
  const tags = detail.tags.length ? `<p class="muted">Tags: ${detail.tags.map(escapeHtml).join(', ')}</p>` : '';
  return `<p><a href="/console/catalog">← Catalog</a></p>
<p>${escapeHtml(detail.summary)}</p>
${detail.description ? `<p>${escapeHtml(detail.description)}</p>` : ''}
<div class="cards">
<div class="card"><div class="muted">SVC score</div><div class="figure">${detail.svc_score}</div></div>
<div class="card"><div class="muted">Price</div><div class="figure">${escapeHtml(priceRange({ min_price_cents: detail.endpoints.length ? detail.pricing.min_price_cents : null, max_price_cents: detail.pricing.max_price_cents, free: detail.pricing.free }))}</div></div>
<div class="card"><div class="muted">Category</div><div>${categoryLink(detail.category)}</div><div class="muted">Provider: ${escapeHtml(detail.provider.name ?? '—')}</div></div>
<div class="card"><div class="muted">Verification</div><div>${escapeHtml(detail.verification.status)}</div><div class="muted">${escapeHtml(when(detail.verification.checked_at))}</div></div>
</div>
${tags}
${
  detail.gateway_url
    ? `<p>Gateway: <code>${escapeHtml(detail.gateway_url)}</code> · <a href="/v1/apis/${encodeURIComponent(slug)}/openapi">OpenAPI document</a>${detail.docs_url ? ` · <a href="${escapeHtml(detail.docs_url)}" rel="noopener noreferrer">Documentation</a>` : ''}</p>`
    : `<div class="banner warn" role="status"><strong>Directory entry: not callable here.</strong> ${escapeHtml(detail.directory_entry?.note ?? '')} ${escapeHtml(detail.directory_entry?.how_to_list ?? '')}</div>${detail.docs_url ? `<p><a href="${escapeHtml(detail.docs_url)}" rel="noopener noreferrer">Its own documentation</a></p>` : ''}`
}`;
}

/** `GET /console/catalog/apis/:slug`. */
export async function listingView(services: Services, ctx: AppContext): Promise<ConsoleView> {
  const slug = paramOf(ctx, 'slug');
  const { listings } = services;
  const detail = await listings.detail(slug);
  const [day, week, month, history, ranks] = await Promise.all([
    listings.stats(slug, { window: '24h' }),
    listings.stats(slug, { window: '7d' }),
    listings.stats(slug, { window: '30d' }),
    listings.history(slug, { limit: 30 }),
    listings.ranks(slug),
  ]);
  const windows = [
    ['Last 24 hours', day],
    ['Last 7 days', week],
    ['Last 30 days', month],
  ] as const;
  return {
    section: 'catalog',
    title: detail.name,
    body: `${listingHeader(detail, slug)}
<section aria-labelledby="endpoints-h"><h2 id="endpoints-h">Endpoints and prices</h2>${endpointsTable(detail)}</section>
<section aria-labelledby="stats-h"><h2 id="stats-h">Stats</h2>${statsSection(windows, history)}</section>
<section aria-labelledby="ranks-h"><h2 id="ranks-h">Ranks</h2>${ranksSection(ranks)}</section>
<section aria-labelledby="terms-h"><h2 id="terms-h">Terms</h2>${termsSection(detail, slug)}</section>`,
  };
}
