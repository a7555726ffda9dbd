/**
 * A listing's page, one implementation for the storefront (`/apis/{slug}`) and the console
 * (`/console/catalog/apis/{slug}`): summary and description, provider, category, tags and status; the figures (score,
 * price, calls, success rate, latency, GMV rank); endpoints with method, path, price, discounts and scheduled price
 * changes, and their input and output schemas; the snippets and what the viewer does first to run them; a quote form;
 * stats per period and score history; the six boards' ranks; the terms in force. A directory entry says plainly it
 * is not callable here and links to its own site.
 */
import type { ListingDetail, ListingSchemaView } from '../../../core/catalog/listings/listings.schemas.js';
import type { Board } from '../../../core/catalog/rollups/rollups.scoring.js';
import type { HistoryPointView, ListingStats, RankView } from '../../../core/catalog/rollups/rollups.schemas.js';
import type { KeySummaryView } from '../../../core/keys/keys.schemas.js';
import { escapeHtml } from '../../../core/html.js';
import type { Services } from '../../../platform/services.js';
import { barChart, lineChart } from '../charts.js';
import { when } from '../console/forms.js';
import type { Viewer } from './frame.js';
import { callStep, quoteAnswer, quoteFor, quoteForm, quoteInput, snippetsSection } from './listing-call.js';
import {
  BOARD_LABELS,
  categoryLink,
  emptyState,
  money,
  priceRange,
  providerLink,
  webUrl,
  withCodeSpans,
  type CatalogSite,
} from './site.js';

/** Everything the page shows, read in parallel (each read answers 404, or 410 once archived, for a gone listing). */
export interface ListingData {
  detail: ListingDetail;
  schema: ListingSchemaView;
  windows: (readonly [string, ListingStats])[];
  history: HistoryPointView[];
  ranks: RankView[];
  /** The signed-in person's live keys (none for a visitor). */
  keys: KeySummaryView[];
}

/** The signed-in person's live keys (none for a visitor). */
async function viewerKeys(services: Services, viewer: Viewer): Promise<KeySummaryView[]> {
  if (!viewer.person) return [];
  return (await services.keyAdmin.list(viewer.person, { limit: 100, offset: 0, include_revoked: false })).items;
}

const WINDOW_LABELS: Record<string, string> = { '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days' };

export async function loadListing(services: Services, slug: string, viewer: Viewer): Promise<ListingData> {
  const [page, keys] = await Promise.all([services.listings.page(slug), viewerKeys(services, viewer)]);
  const windows = page.stats.map((s) => [WINDOW_LABELS[s.window] ?? s.window, s] as const);
  return { detail: page.detail, schema: page.schema, windows, history: page.history, ranks: page.ranks, keys };
}

const pct = (rate: number | null) => (rate == null ? '—' : `${(rate * 100).toFixed(1)}%`);

function endpointsTable(d: ListingData): string {
  const { detail } = d;
  if (!detail.endpoints.length) return emptyState('This API lists no endpoints.');
  const schemasById = new Map(d.schema.endpoints.map((e) => [e.endpoint_id, e]));
  const rows = detail.endpoints
    .map((e) => {
      const discount = e.discount
        ? `<br><span class="ok">${escapeHtml(e.discount.label ?? 'Discount')}: −${money(e.discount.off_cents)}</span>`
        : '';
      const scheduled = e.price_increase
        ? `${money(e.price_increase.price_cents)} from ${escapeHtml(when(e.price_increase.effective_at))}`
        : '—';
      const s = schemasById.get(e.endpoint_id);
      const schema = (label: string, value: unknown) =>
        value
          ? `<details class="schemas"><summary>${label}</summary><pre class="schema">${escapeHtml(JSON.stringify(value, null, 2))}</pre></details>`
          : '';
      const schemas = `${schema('Input schema', s?.input_schema)}${schema('Output schema', s?.output_schema)}`;
      return `<tr id="endpoint-${escapeHtml(e.endpoint_id)}"><td><code>${escapeHtml(e.method)}</code></td><td><code>${escapeHtml(e.path)}</code>${e.summary ? `<br><span class="muted">${escapeHtml(e.summary)}</span>` : ''}
${schemas || '<div class="muted">No input or output schema described.</div>'}</td>
<td class="num">${e.free ? 'Free' : money(e.price_cents_effective)}${e.price_cents !== e.price_cents_effective ? ` <s>${money(e.price_cents)}</s>` : ''}${discount}</td><td>${scheduled}</td></tr>`;
    })
    .join('');
  return `<table><caption class="visually-hidden">Endpoints and prices</caption><thead><tr><th scope="col">Method</th><th scope="col">Path and schemas</th><th scope="col" class="num">Price per call</th><th scope="col">Scheduled change</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** Calls per period and the score per day as charts, and the stats per period as a table. */
function statsSection(d: ListingData): string {
  const callsChart = barChart(
    [
      { name: 'Calls', points: d.windows.map(([label, s]) => ({ label, value: s.calls })) },
      { name: 'Successful', points: d.windows.map(([label, s]) => ({ label, value: s.successes })) },
    ],
    { title: 'Calls by period', empty: 'No calls yet: the chart fills in once consumers call this API.' },
  );
  const scoreChart = lineChart(
    [{ name: 'SVC score', points: d.history.map((h) => ({ label: h.day, value: h.svc_score })) }],
    { title: 'SVC score per day', empty: 'No score history yet: scores are recorded once a day.' },
  );
  const rows = d.windows
    .map(
      ([label, s]) =>
        `<tr><th scope="row">${label}</th><td class="num">${s.calls}</td><td class="num">${pct(s.success_rate)}</td><td class="num">${s.latency_ms.p50 ?? '—'}</td><td class="num">${s.latency_ms.p95 ?? '—'}</td><td class="num">${money(s.gmv_cents)}</td><td class="num">${s.unique_consumers}</td></tr>`,
    )
    .join('');
  return `<div class="charts">${callsChart}${scoreChart}</div>
<table><caption class="visually-hidden">Stats by period</caption><thead><tr><th scope="col">Period</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Success rate</th><th scope="col" class="num">p50 ms</th><th scope="col" class="num">p95 ms</th><th scope="col" class="num">GMV</th><th scope="col" class="num">Consumers</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function ranksSection(site: CatalogSite, detail: ListingDetail, ranks: RankView[]): string {
  const categoryName = (slug: string) => (detail.category?.slug === slug ? detail.category.name : slug);
  const item = (r: RankView) =>
    `<li><a href="${site.leaderboard(r.board, r.category)}">${escapeHtml(BOARD_LABELS[r.board as Board] ?? r.board)}</a>${r.category ? ` in ${escapeHtml(categoryName(r.category))}` : ''}: ${r.rank === null ? `not ranked (${r.board_size} ranked)` : `#${r.rank} of ${r.board_size}`}</li>`;
  return `<ul>${ranks.map(item).join('')}</ul>`;
}

function termsSection(detail: ListingDetail): string {
  const page = `/terms/${encodeURIComponent(detail.slug)}`;
  if (!detail.terms.documents.length)
    return `<p>This API has no terms of its own. <a href="${page}">Terms page</a></p>`;
  const docs = detail.terms.documents
    .map(
      (t) =>
        `<li><a href="${escapeHtml(t.snapshot_url)}">${escapeHtml(t.title ?? t.kind)}</a> <span class="muted">(${escapeHtml(t.kind)}, version ${escapeHtml(t.version)}, ${escapeHtml(t.acceptance_mode)}, in force since ${escapeHtml(when(t.activated_at))})</span></li>`,
    )
    .join('');
  return `<ul>${docs}</ul><p><a href="${page}">Read and accept the terms</a>${detail.terms.required ? ' (required before calling: the gateway answers 428 until your organization accepts)' : ''}</p>`;
}

function figures(d: ListingData): string {
  const { detail } = d;
  const month = d.windows[2]![1];
  const gmv = d.ranks.find((r) => r.board === 'top_grossing' && r.scope === 'overall');
  const card = (label: string, value: string, note = '') =>
    `<div class="card"><div class="muted">${label}</div><div class="figure">${value}</div>${note ? `<div class="muted">${note}</div>` : ''}</div>`;
  const price = priceRange({
    min_price_cents: detail.endpoints.length ? detail.pricing.min_price_cents : null,
    max_price_cents: detail.pricing.max_price_cents,
  });
  return `<div class="cards">
${card('SVC score', String(detail.svc_score), detail.merit.rated ? '' : 'not rated yet')}
${card('Price', escapeHtml(price))}
${card('Calls, 30 days', month.calls.toLocaleString('en-US'))}
${card('Success rate, 30 days', pct(month.success_rate))}
${card('Latency p95, 30 days', month.latency_ms.p95 == null ? '—' : `${month.latency_ms.p95} ms`)}
${card('GMV rank', gmv?.rank == null ? '—' : `#${gmv.rank}`, gmv?.rank == null ? 'not ranked yet' : `of ${gmv.board_size} on Top grossing`)}
</div>`;
}

/** The summary, description and facts; where to call it, or why it is not callable here. */
function listingHeader(site: CatalogSite, detail: ListingDetail): string {
  const docs = webUrl(detail.docs_url);
  const tags = detail.tags.length
    ? detail.tags.map((t) => `<a href="${site.search}?q=${encodeURIComponent(t)}">${escapeHtml(t)}</a>`).join(', ')
    : '—';
  const smoke = { never: 'not run yet', passed: 'passed', failed: 'failed' }[detail.verification.status];
  const status = detail.callable
    ? `<span class="badge">live</span> callable through the gateway · upstream smoke test ${smoke}${detail.verification.checked_at ? ` (${escapeHtml(when(detail.verification.checked_at))})` : ''}`
    : '<span class="badge">directory entry</span> not callable here';
  const where = detail.gateway_url
    ? `<p>Gateway: <code>${escapeHtml(detail.gateway_url)}</code> · <a href="/v1/apis/${encodeURIComponent(detail.slug)}/openapi">OpenAPI document</a>${docs ? ` · <a href="${escapeHtml(docs)}" rel="noopener noreferrer">Documentation</a>` : ''}</p>`
    : `<div class="banner warn" role="note"><strong>Directory entry: not callable here.</strong> ${escapeHtml(detail.directory_entry?.note ?? '')} ${escapeHtml(detail.directory_entry?.how_to_list ?? '')}</div>${docs ? `<p><a href="${escapeHtml(docs)}" rel="noopener noreferrer nofollow">Go to its own site: ${escapeHtml(docs)}</a></p>` : ''}`;
  return `<p><a href="${site.search}">← All APIs</a></p>
<p><strong>${escapeHtml(detail.summary)}</strong></p>
${detail.description ? `<p>${withCodeSpans(detail.description)}</p>` : ''}
<table class="facts"><caption class="visually-hidden">About this API</caption><tbody>
<tr><th scope="row">Provider</th><td>${providerLink(detail.provider)}</td></tr>
<tr><th scope="row">Category</th><td>${categoryLink(site, detail.category)}</td></tr>
<tr><th scope="row">Tags</th><td>${tags}</td></tr>
<tr><th scope="row">Status</th><td>${status}</td></tr>
<tr><th scope="row">Published</th><td>${escapeHtml(when(detail.published_at))}</td></tr>
</tbody></table>
${where}`;
}

export function listingBody(
  site: CatalogSite,
  d: ListingData,
  viewer: Viewer,
  urls: Services['config']['urls'],
): string {
  const { detail } = d;
  const callable = detail.callable && detail.endpoints.length > 0;
  return `${listingHeader(site, detail)}
${figures(d)}
${callable ? callStep(site, detail, d.keys, viewer) : ''}
<section aria-labelledby="endpoints-h"><h2 id="endpoints-h">Endpoints and prices</h2>${endpointsTable(d)}</section>
${callable ? snippetsSection(detail, d.schema, urls) : ''}
${callable ? quoteForm(site, detail, d.schema, d.keys) : ''}
<section aria-labelledby="stats-h"><h2 id="stats-h">Stats</h2>${statsSection(d)}</section>
<section aria-labelledby="ranks-h"><h2 id="ranks-h">Ranks</h2>${ranksSection(site, detail, d.ranks)}</section>
<section aria-labelledby="terms-h"><h2 id="terms-h">Terms in force</h2>${termsSection(detail)}</section>`;
}

export interface QuotePage {
  title: string;
  body: string;
}

/** The quote's answer, and the form again to quote another endpoint (the storefront's and the console's). */
export async function quotePage(
  services: Services,
  site: CatalogSite,
  slug: string,
  query: Record<string, string>,
  viewer: Viewer,
): Promise<QuotePage> {
  const input = quoteInput(query);
  const [detail, schema, keys] = await Promise.all([
    services.listings.detail(slug),
    services.listings.schema(slug),
    viewerKeys(services, viewer),
  ]);
  const answer = await quoteFor(services, detail.slug, input, viewer, keys);
  const keyName = keys.find((k) => k.id === input.keyId)?.name;
  return {
    title: `Quote: ${input.endpoint}`,
    body: `<p><a href="${site.listing(detail.slug)}">← ${escapeHtml(detail.name)}</a></p>
${quoteAnswer(answer, keyName)}
${quoteForm(site, detail, schema, keys, { endpoint: input.endpoint, key: input.keyId })}`,
  };
}
