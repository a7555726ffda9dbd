/**
 * How to call a listing, on its page (issue 31): the first step for who is looking (a visitor signs up, a person
 * without a usable key creates one, a person with keys sees which can call it), the snippets that work verbatim
 * with `SVC_API_KEY` set, and the quote form with its answer page (GET /v1/apis/{slug}/quote's service; with one of
 * the person's keys, the gateway's own decision for that key).
 */
import type { ListingDetail, ListingSchemaView, QuoteView } from '../../../core/catalog/listings/listings.schemas.js';
import { QuoteQuery } from '../../../core/catalog/listings/quote.js';
import { ForbiddenError, ValidationError } from '../../../core/errors.js';
import { escapeHtml } from '../../../core/html.js';
import type { KeySummaryView } from '../../../core/keys/keys.schemas.js';
import type { Services } from '../../../platform/services.js';
import { options } from '../console/provider-forms.js';
import { parseForm } from '../forms.js';
import type { Viewer } from './frame.js';
import { examplePath, snippetsFor } from './snippets.js';
import { money, type CatalogSite } from './site.js';

/** The person's keys that may call through the gateway. */
export const callingKeys = (keys: readonly KeySummaryView[]) => keys.filter((k) => k.scopes.includes('proxy:call'));

/** What the viewer does first: sign up, create a key, or use one of theirs. */
export function callStep(site: CatalogSite, detail: ListingDetail, keys: KeySummaryView[], viewer: Viewer): string {
  const here = site.listing(detail.slug);
  // Keys offers the way back here once the key exists.
  const keysPage = `/console/keys?next=${encodeURIComponent(here)}`;
  const paid = detail.endpoints.some((e) => !e.free);
  const credit = paid
    ? ' A new account gets $1.00 of trial credit for paid calls.'
    : ' Its free endpoints cost nothing.';
  const run =
    '<li>Put the key in <code>SVC_API_KEY</code> (<code>export SVC_API_KEY=svc_live_…</code>) and run a snippet below as it is.</li>';
  let steps: string;
  if (!viewer.person) {
    steps = `<h2 id="start-h">Sign up to call it</h2><ol>
<li><a href="/signup?next=${encodeURIComponent(here)}">Create an account</a> (or <a href="/login?next=${encodeURIComponent(here)}">sign in</a>): your email and a 6-digit code.${credit}</li>
<li><a href="${keysPage}">Create a key</a> in the console under Keys; its secret is shown once.</li>
${run}</ol>`;
  } else {
    const usable = callingKeys(keys);
    steps = usable.length
      ? `<h2 id="start-h">Call it with your key</h2><p>Your keys that can call it: ${usable
          .map((k) => `<strong>${escapeHtml(k.name)}</strong> <code>${escapeHtml(k.keyPrefix)}…</code>`)
          .join(
            ', ',
          )}. The console showed each secret once; <a href="${keysPage}">create a key</a> if you no longer have it.</p><ol>${run}</ol>`
      : `<h2 id="start-h">Create a key to call it</h2><ol>
<li><a href="${keysPage}">Create a key</a> in the console under Keys (it needs <code>proxy:call</code>); its secret is shown once.</li>
${run}</ol>`;
  }
  return `<section class="step" aria-labelledby="start-h">${steps}</section>`;
}

/** The snippets for the first endpoint, and a `curl` line for each endpoint. */
export function snippetsSection(
  detail: ListingDetail,
  schema: ListingSchemaView,
  urls: Services['config']['urls'],
): string {
  const target = { slug: detail.slug, gatewayBase: detail.gateway_url!, gateway: urls.gateway, mcp: urls.mcp };
  const endpoints = schema.endpoints;
  const first = endpoints[0]!;
  const s = snippetsFor(target, first);
  const block = (id: string, title: string, text: string) =>
    `<h3 id="${id}-h">${title}</h3><pre class="snippet" id="${id}" aria-labelledby="${id}-h" tabindex="0"><code>${escapeHtml(text)}</code></pre>`;
  const others =
    endpoints.length > 1
      ? `<details><summary>curl for every endpoint</summary>${endpoints
          .map(
            (e) =>
              `<p><code>${escapeHtml(e.method)} ${escapeHtml(e.path)}</code></p><pre class="snippet"><code>${escapeHtml(snippetsFor(target, e).curl)}</code></pre>`,
          )
          .join('')}</details>`
      : '';
  return `<section class="snippets" aria-labelledby="snippets-h"><h2 id="snippets-h">Call it: ${escapeHtml(first.method)} ${escapeHtml(s.path)}</h2>
<p class="muted">Each works as it is once <code>SVC_API_KEY</code> holds your key. Answers come in the envelope: <code>data</code> is the upstream's body, <code>meta.cost_cents</code> what the call cost.</p>
${block('snippet-curl', 'curl', s.curl)}
${block('snippet-fetch', 'TypeScript (fetch)', s.fetch)}
${block('snippet-svc', 'svc (the command line)', s.svc)}
${block('snippet-mcp', 'MCP: add_api_tools', s.mcp)}
${others}</section>`;
}

/** `GET {quote}?endpoint=METHOD+/path[&key=…]`: what a call would cost, and with a key, whether it would go through. */
export function quoteForm(
  site: CatalogSite,
  detail: ListingDetail,
  schema: ListingSchemaView,
  keys: KeySummaryView[],
  selected?: { endpoint?: string; key?: string },
): string {
  const endpoints = schema.endpoints.map((e) => {
    const value = `${e.method} ${examplePath(e)}`;
    return { value, label: value === `${e.method} ${e.path}` ? value : `${value} (${e.path})` };
  });
  const usable = callingKeys(keys);
  const keySelect = usable.length
    ? `<div><label for="quote-key">With your key</label><select id="quote-key" name="key"><option value="">No key: the price only</option>${options(
        usable.map((k) => ({ value: k.id, label: `${k.name} (${k.keyPrefix}…)` })),
        selected?.key,
      )}</select></div>`
    : '';
  return `<section aria-labelledby="quote-h"><h2 id="quote-h">Quote a call</h2>
<form class="filters" method="get" action="${site.quote(detail.slug)}">
<div><label for="quote-endpoint">Endpoint</label><select id="quote-endpoint" name="endpoint">${options(endpoints, selected?.endpoint)}</select></div>
${keySelect}<div><button type="submit">Get a quote</button></div></form>
<p class="muted">Nothing is spent. The same answer as <code>GET /v1/apis/${escapeHtml(detail.slug)}/quote?method=…&amp;path=…</code>.</p></section>`;
}

/** The quote's query from the page: `endpoint=GET /path` (or `method` and `path`), and an optional key id. */
export function quoteInput(query: Record<string, string>): { quote: QuoteQuery; keyId?: string; endpoint: string } {
  const [method, ...rest] = (query.endpoint ?? '').trim().split(/\s+/);
  const raw = query.endpoint ? { method, path: rest.join(' ') } : { method: query.method, path: query.path };
  if (!raw.method || !raw.path) throw new ValidationError('endpoint: pick an endpoint to quote, like GET /forecast.');
  const quote = parseForm(QuoteQuery, raw);
  return { quote, keyId: query.key || undefined, endpoint: `${quote.method} ${quote.path}` };
}

/** The quote for the viewer: the price, and with one of their keys the gateway's decision for it. */
export async function quoteFor(
  services: Services,
  slug: string,
  input: ReturnType<typeof quoteInput>,
  viewer: Viewer,
  keys: KeySummaryView[],
): Promise<QuoteView> {
  if (!input.keyId) return services.listings.quoteAs(slug, input.quote, { type: 'anonymous' });
  if (!viewer.person || !callingKeys(keys).some((k) => k.id === input.keyId)) {
    throw new ForbiddenError('key: pick one of your own keys that can call APIs (proxy:call).');
  }
  const caller = await services.keys.authenticateKeyId(input.keyId);
  return services.listings.quoteAs(slug, input.quote, { type: 'api_key', ...caller });
}

export function quoteAnswer(q: QuoteView, keyName?: string): string {
  const rows = [
    ['Endpoint', `<code>${escapeHtml(q.endpoint.method)} ${escapeHtml(q.endpoint.path)}</code>`],
    ['Calls', `<code>${escapeHtml(q.gateway_url)}</code>`],
    ['Price now', q.price_cents_effective === 0 ? 'Free' : money(q.price_cents_effective)],
    ...(q.price_cents !== q.price_cents_effective ? [['Before discount', money(q.price_cents)]] : []),
    ...(q.discount
      ? [['Discount', `${escapeHtml(q.discount.label ?? 'Discount')}: −${money(q.discount.off_cents)}`]]
      : []),
    ...(q.price_increase
      ? [
          [
            'Scheduled change',
            `${money(q.price_increase.price_cents)} from ${escapeHtml(q.price_increase.effective_at.slice(0, 16).replace('T', ' '))} UTC`,
          ],
        ]
      : []),
  ];
  const table = `<table><caption class="visually-hidden">Quote</caption><tbody>${rows.map(([k, v]) => `<tr><th scope="row">${k}</th><td>${v}</td></tr>`).join('')}</tbody></table>`;
  if (!q.admission) return table;
  const a = q.admission;
  const verdict = a.allowed
    ? `<div class="banner good" role="status">The gateway would accept this call with your key <strong>${escapeHtml(keyName ?? '')}</strong> now.</div>`
    : `<div class="banner bad" role="status">The gateway would refuse this call with your key <strong>${escapeHtml(keyName ?? '')}</strong>: ${a.status ?? ''} <code>${escapeHtml(a.error_code ?? '')}</code>. ${escapeHtml(a.message ?? '')}</div>`;
  return `${verdict}${table}`;
}
