/**
 * Console · Provider · one API's prices, Stripe-clear (issue 31, section 5): for each endpoint the price a call costs
 * now, the marketplace's fee and what the provider receives, computed by the one fee-split rule (`splitPrice`,
 * core/money/split.ts) at the configured PLATFORM_FEE_PERCENT, with the rounding said where it changes a cent (20% of
 * 3¢ is 0.6¢, a 1¢ fee). Without JavaScript the figures are there for the current prices; "Preview" posts the typed
 * prices and shows the same figures for them without saving; "Save prices" saves (Post/Redirect/Get) and the page it
 * leads to shows the figures of the saved prices.
 */
import { escapeHtml } from '../../../core/html.js';
import { splitPrice } from '../../../core/money/split.js';
import type { ProviderApiView } from '../../../core/providers/listing-views.js';
import { PricingBody } from '../../../core/providers/providers.schemas.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext } from '../../context.js';
import { dollarsValue } from '../dollars.js';
import { fieldMessage, FormError, type FormProblems, invalidAttrs, problemSummary } from '../form-errors.js';
import { csrfToken, hidden } from '../forms.js';
import { parseForm, when } from './forms.js';
import { dollarsToCents } from './provider-forms.js';
import { emptyState, money } from './shell.js';

type Endpoint = ProviderApiView['endpoints'][number];

/** The pricing form as it is shown again: what was typed, and a refusal or a preview of the typed prices. */
export interface PricingFormState {
  typed?: Record<string, string>;
  problems?: FormProblems;
  /** The typed prices in cents by endpoint id: their fee and net are shown beside them. */
  preview?: Record<string, number>;
}

const priceField = (e: Pick<Endpoint, 'endpoint_id'>) => `price_${e.endpoint_id}`;

/** `0.6¢`, `2.5¢`, `1¢`: a fraction of a cent as the percentage gives it, before rounding. */
function exactCents(priceCents: number, feePercent: number): string {
  return `${String(Math.round(priceCents * feePercent) / 100)}¢`;
}

/**
 * The fee and net of one price: `$0.01 · you receive $0.02`, with the rounding said when the percentage is not a whole
 * cent (`20% of 3¢ is 0.6¢, rounded to 1¢`).
 */
export function feeFigures(priceCents: number, feePercent: number): { fee: string; net: string; rounding: string } {
  const split = splitPrice(priceCents, feePercent);
  const exact = (priceCents * feePercent) % 100 !== 0;
  const rounding = exact
    ? `${feePercent}% of ${priceCents}¢ is ${exactCents(priceCents, feePercent)}, rounded to ${split.platformFeeCents}¢`
    : '';
  return { fee: money(split.platformFeeCents), net: money(split.providerNetCents), rounding };
}

function figureCells(priceCents: number, feePercent: number, what: string): string {
  const f = feeFigures(priceCents, feePercent);
  const note = f.rounding ? `<div class="muted rounding">${escapeHtml(f.rounding)}</div>` : '';
  return `<td class="num" data-fee="${what}">${f.fee}${note}</td><td class="num" data-net="${what}">${f.net}</td>`;
}

function pricingRow(e: Endpoint, feePercent: number, state?: PricingFormState): string {
  const id = priceField(e);
  const value = state?.typed?.[id] ?? dollarsValue(e.price_increase?.price_cents ?? e.price_cents);
  const increase = e.price_increase
    ? `<div class="muted">${money(e.price_increase.price_cents)} from ${escapeHtml(when(e.price_increase.effective_at))}</div>`
    : '';
  const discount =
    e.price_cents_effective !== e.price_cents
      ? `<div class="muted">list ${money(e.price_cents)}, discounted</div>`
      : '';
  const preview = state?.preview?.[e.endpoint_id];
  const previewCells =
    state?.preview === undefined
      ? ''
      : preview === undefined
        ? '<td class="num">—</td><td class="num">—</td><td class="num">—</td>'
        : `<td class="num">${money(preview)}</td>${figureCells(preview, feePercent, 'new')}`;
  return `<tr data-endpoint="${escapeHtml(e.endpoint_id)}"><td><code>${escapeHtml(e.method)}</code></td><td><label for="${id}" class="inline-label"><code>${escapeHtml(e.path)}</code></label>${e.summary ? `<br><span class="muted">${escapeHtml(e.summary)}</span>` : ''}</td>
<td class="num" data-price="now">${money(e.price_cents_effective)}${discount}${increase}</td>${figureCells(e.price_cents_effective, feePercent, 'now')}
<td>$ <input id="${id}" name="${id}" inputmode="decimal" size="8" value="${escapeHtml(value)}"${invalidAttrs(state?.problems, id)}>${fieldMessage(state?.problems, id)}</td>${previewCells}</tr>`;
}

/** The rule in words, once under the table: the percentage, the rounding, the two cases people ask about. */
function feeRule(feePercent: number): string {
  const one = splitPrice(1, feePercent);
  const three = splitPrice(3, feePercent);
  return `<p id="fee-rule" class="muted">The marketplace keeps ${feePercent}% of each paid call's price as its fee; you receive the rest. The fee is rounded to the nearest whole cent (half a cent rounds up), per call: at ${feePercent}%, a 1¢ call carries a ${one.platformFeeCents}¢ fee (you receive ${one.providerNetCents}¢) and a 3¢ call a ${three.platformFeeCents}¢ fee (you receive ${three.providerNetCents}¢). Free endpoints carry no fee.</p>`;
}

/** The pricing form: fee and net beside each price now (and beside the typed ones on a preview), Preview and Save. */
export function pricingForm(ctx: AppContext, api: ProviderApiView, feePercent: number, state?: PricingFormState) {
  if (!api.endpoints.length) return emptyState('This API has no endpoints to price.');
  const rows = api.endpoints.map((e) => pricingRow(e, feePercent, state)).join('');
  const previewHead =
    state?.preview === undefined
      ? ''
      : '<th scope="col" class="num">New price</th><th scope="col" class="num">New fee</th><th scope="col" class="num">You would receive</th>';
  const notice =
    api.status === 'live'
      ? 'On a live API a decrease applies at once; an increase applies after the notice period.'
      : 'Draft: prices apply at once.';
  return `${problemSummary(state?.problems)}${state?.preview ? '<p role="status"><strong>Preview:</strong> the figures of the prices you typed are in the last three columns. Nothing is saved until you press “Save prices”.</p>' : ''}
<form method="post" action="/console/provider/apis/${encodeURIComponent(api.api_id)}/pricing">${hidden('csrf', csrfToken(ctx))}
<table aria-describedby="fee-rule"><caption class="visually-hidden">Prices per endpoint, with the marketplace fee and what you receive per call</caption><thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col" class="num">Price now</th><th scope="col" class="num">Marketplace fee (${feePercent}%)</th><th scope="col" class="num">You receive</th><th scope="col">New price (dollars per call)</th>${previewHead}</tr></thead><tbody>${rows}</tbody></table>
${feeRule(feePercent)}
<p class="muted">${notice}</p>
<p><button type="submit" name="intent" value="preview">Preview fees</button> <button type="submit">Save prices</button></p></form>`;
}

/** The typed prices in cents by endpoint id (blank fields skipped); every bad one is refused beside its input. */
export function typedPrices(api: ProviderApiView, body: Record<string, string>): Map<string, number> {
  const prices = new Map<string, number>();
  const problems: Record<string, string> = {};
  for (const e of api.endpoints) {
    const raw = body[priceField(e)];
    if (raw === undefined || raw.trim() === '') continue;
    try {
      prices.set(e.endpoint_id, dollarsToCents(raw, `Price of ${e.method} ${e.path}`, priceField(e)));
    } catch (err) {
      if (!(err instanceof FormError)) throw err;
      Object.assign(problems, err.fields);
    }
  }
  if (Object.keys(problems).length) throw new FormError(problems);
  return prices;
}

/** "Preview fees": the page again with the typed prices' fee and net beside them, nothing saved. */
export async function previewPrices(
  services: Services,
  person: SessionPrincipal,
  apiId: string,
  body: Record<string, string>,
): Promise<{ form: 'pricing'; typed: Record<string, string>; preview: Record<string, number>; status: number }> {
  const api = await services.providers.get(person, apiId);
  const { intent: _intent, ...typed } = body;
  return { form: 'pricing', typed, preview: Object.fromEntries(typedPrices(api, body)), status: 200 };
}

/** Save the typed prices that differ from the price (or the scheduled one); the flash code of the outcome. */
export async function savePrices(
  services: Services,
  person: SessionPrincipal,
  apiId: string,
  body: Record<string, string>,
) {
  const api = await services.providers.get(person, apiId);
  const changes: { endpoint_id: string; price_cents: number }[] = [];
  for (const [endpointId, cents] of typedPrices(api, body)) {
    const e = api.endpoints.find((x) => x.endpoint_id === endpointId)!;
    if (cents !== (e.price_increase?.price_cents ?? e.price_cents)) {
      changes.push({ endpoint_id: endpointId, price_cents: cents });
    }
  }
  if (!changes.length) return 'unchanged';
  const saved = await services.priceChanges.updatePricing(
    person,
    apiId,
    parseForm(PricingBody, { endpoints: changes }, { endpoints: 'Prices' }),
  );
  return saved.endpoints.some((e) => e.price_increase) ? 'scheduled' : 'priced';
}
