/**
 * Console · Provider · Analytics: the provider's money to date in one story (earned = fees + net; net = paid out +
 * reversed + pending + available; where the net goes before and after payouts are set up; the latest earnings and
 * payouts named in words), then GMV, calls, fees and payouts per day over a range; and the open requests for missing
 * APIs.
 */
import { escapeHtml } from '../../../core/html.js';
import type { LedgerKind } from '../../../db/entities/index.js';
import type { LedgerHistoryRow } from '../../../core/billing/ledger.service.js';
import type { AnalyticsView, EarningsToDateView } from '../../../core/providers/providers.schemas.js';
import { AnalyticsQuery } from '../../../core/providers/analytics.service.js';
import { providerDaily } from '../../../core/providers/console-reads.js';
import { barChart, lineChart } from '../charts.js';
import { emptyState, money } from './shell.js';
import { formQuery } from './provider-forms.js';
import { parseForm, when } from './forms.js';
import {
  fieldMessage,
  fixable,
  type FormFields,
  type FormProblems,
  invalidAttrs,
  problemSummary,
} from '../form-errors.js';
import { subNav, type ProviderView } from './provider-common.js';

// ---- analytics ------------------------------------------------------------------------------------------------

const card = (label: string, value: string, note = '', id = '') =>
  `<div class="card"${id ? ` data-figure="${id}"` : ''}><div class="muted">${label}</div><div class="figure">${value}</div>${note ? `<div class="muted">${note}</div>` : ''}</div>`;

/** The provider's rows on its own books: earnings, fees, payouts and reversals. */
const EARNING_KINDS: readonly LedgerKind[] = ['provider_earning', 'platform_fee', 'payout', 'chargeback'];

function recentEarnings(rows: LedgerHistoryRow[]): string {
  if (!rows.length) return emptyState('No earnings yet: they appear here as your paid endpoints are called.');
  const body = rows
    .map(
      (r) =>
        `<tr><td>${when(r.created_at)}</td><td>${escapeHtml(r.description)}</td><td class="num">${money(r.amount_cents)}</td><td class="num">${money(r.balance_after_cents)}</td></tr>`,
    )
    .join('');
  return `<table><caption class="visually-hidden">Latest earnings, fees and payouts on your balance</caption><thead><tr><th scope="col">Time</th><th scope="col">What</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Balance after</th></tr></thead><tbody>${body}</tbody></table>
<p class="muted">Every movement of your balance (your own calls and purchases too): <a href="/console/billing#history">Billing history</a>.</p>`;
}

/** All time: the cards, the two identities written out, where the net goes, the latest rows in words. */
function moneyStory(e: EarningsToDateView, recent: LedgerHistoryRow[]): string {
  const payouts = {
    none: 'not set up',
    pending: 'onboarding not finished',
    enabled: 'enabled',
  }[e.payouts];
  const setUp = e.payouts === 'enabled' ? '' : ' <a href="/console/provider">Set up payouts (Stripe Connect)</a>.';
  return `<div class="cards">${card('Earned', money(e.gross_cents), 'what consumers paid for your calls', 'gross')}${card('Marketplace fees', money(e.platform_fee_cents), '', 'fees')}${card('Net', money(e.net_cents), 'yours', 'net')}${card('Paid out', money(e.paid_out_cents), '', 'paid_out')}${card('Pending', money(e.pending_cents), 'card payments not collected yet', 'pending')}${card('Available', money(e.available_cents), 'payable, not paid out yet', 'available')}${card('Balance', money(e.balance_cents), `payouts ${payouts}`, 'balance')}</div>
<p id="money-identity">Earned ${money(e.gross_cents)} = marketplace fees ${money(e.platform_fee_cents)} + net ${money(e.net_cents)}. Net ${money(e.net_cents)} = paid out ${money(e.paid_out_cents)}${e.reversed_cents ? ` + taken back by chargebacks ${money(e.reversed_cents)}` : ''} + pending ${money(e.pending_cents)} + available ${money(e.available_cents)}.</p>
<p id="where-earnings-go">${escapeHtml(e.where_earnings_go)}${setUp}</p>
<h3>Latest earnings and payouts</h3>
${recentEarnings(recent)}`;
}

/** The range form's fields (form-errors.ts). */
const RANGE_FIELDS: FormFields = { from: 'From', to: 'To' };

/** The range form, filled from the query (or, for the default range, its first day); a refusal beside its field. */
function rangeForm(typed: Record<string, string>, defaultFrom: string, p?: FormProblems): string {
  return `${problemSummary(p)}<form class="filters" method="get" action="/console/provider/analytics">
<div><label for="from">From</label><input id="from" name="from" type="date" value="${escapeHtml(typed.from ?? defaultFrom)}"${invalidAttrs(p, 'from')}>${fieldMessage(p, 'from')}</div>
<div><label for="to">To</label><input id="to" name="to" type="date" value="${escapeHtml(typed.to ?? '')}"${invalidAttrs(p, 'to')}>${fieldMessage(p, 'to')}</div>
<div><button type="submit">Show</button></div></form>`;
}

type Days = Awaited<ReturnType<typeof providerDaily>>;

function chartsOf(days: Days): string {
  const perDay = (pick: (d: Days[number]) => number) => days.map((d) => ({ label: d.day.slice(5), value: pick(d) }));
  return `${barChart(
    [
      { name: 'Calls', points: perDay((d) => d.calls) },
      { name: 'Successful', points: perDay((d) => d.successful_calls) },
    ],
    { title: 'Calls per day', empty: 'No calls in this range.' },
  )}
${lineChart([{ name: 'GMV', points: perDay((d) => d.gmv_cents) }], { title: 'GMV per day', format: money, empty: 'No paid calls in this range.' })}
${barChart(
  [
    { name: 'Payouts', points: perDay((d) => d.payouts_cents) },
    { name: 'Marketplace fees', points: perDay((d) => d.platform_fee_cents) },
  ],
  { title: 'Payouts and marketplace fees per day', format: money, empty: 'No payouts or fees in this range.' },
)}`;
}

function byApiOf(view: AnalyticsView): string {
  if (!view.by_api.length) {
    return emptyState(
      '<p><strong>No APIs yet</strong>, so no analytics. <a href="/console/provider">Create an API</a>.</p>',
    );
  }
  const rows = view.by_api
    .map(
      (a) =>
        `<tr><td><a href="/console/provider/apis/${encodeURIComponent(a.api_id)}">${escapeHtml(a.slug)}</a></td><td class="num">${a.calls}</td><td class="num">${a.successful_calls}</td><td class="num">${money(a.gmv_cents)}</td></tr>`,
    )
    .join('');
  return `${barChart([{ name: 'GMV', points: view.by_api.slice(0, 12).map((a) => ({ label: a.slug.slice(0, 18), value: a.gmv_cents })) }], { title: 'GMV by API', format: money, empty: 'No API earned in this range.' })}
<table><caption class="visually-hidden">By API</caption><thead><tr><th scope="col">API</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Successful</th><th scope="col" class="num">GMV</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export const analyticsView: ProviderView = async (services, ctx, person) => {
  const { done: _done, ...range } = formQuery(ctx);
  let view: AnalyticsView;
  try {
    view = await services.analytics.provider(person, parseForm(AnalyticsQuery, range, RANGE_FIELDS));
  } catch (err) {
    const problems = fixable(err, RANGE_FIELDS);
    if (!problems) throw err;
    const form = rangeForm(range, '', problems);
    return {
      section: 'provider',
      title: 'Analytics',
      status: 400,
      body: `${subNav('/console/provider/analytics')}${form}`,
    };
  }
  const recent = await services.ledger.history(person.orgId, { limit: 10, offset: 0 }, EARNING_KINDS);
  const days = await providerDaily(services.orm, person.orgId, new Date(view.range.from), new Date(view.range.to));
  const t = view.totals;
  return {
    section: 'provider',
    title: 'Analytics',
    body: `${subNav('/console/provider/analytics')}
<section aria-labelledby="money-h"><h2 id="money-h">Your money, all time</h2>${moneyStory(view.earnings_to_date, recent.items)}</section>
<h2>In a range</h2>
${rangeForm(range, view.range.from.slice(0, 10))}
<p class="muted">${escapeHtml(when(view.range.from))} to ${escapeHtml(when(view.range.to))}</p>
<div class="cards">${card('Calls', t.calls.toLocaleString('en-US'))}${card('Successful calls', t.successful_calls.toLocaleString('en-US'))}${card('GMV', money(t.gmv_cents))}${card('Earned', money(t.provider_earnings_cents))}${card('Marketplace fees', money(t.platform_fee_cents))}${card('Net', money(t.net_earnings_cents))}${card('Paid out', money(t.payouts_cents))}</div>
<div class="charts">${chartsOf(days)}</div>
<section aria-labelledby="by-api-h"><h2 id="by-api-h">By API</h2>${byApiOf(view)}</section>`,
  };
};

// ---- requests for missing APIs --------------------------------------------------------------------------------

export const requestsView: ProviderView = async (services) => {
  const requests = await services.demand.list({ limit: 100, status: 'open' });
  const body = requests.length
    ? `<table><caption class="visually-hidden">Open requests</caption><thead><tr><th scope="col">Requested API</th><th scope="col" class="num">Votes</th><th scope="col">First asked</th><th scope="col">Last asked</th></tr></thead><tbody>${requests
        .map(
          (r) =>
            `<tr><td>${escapeHtml(r.query)}</td><td class="num">${r.votes}</td><td>${escapeHtml(when(r.created_at))}</td><td>${escapeHtml(when(r.last_requested_at))}</td></tr>`,
        )
        .join('')}</tbody></table>
<p>Build one? <a href="/console/provider#create-h">Create the API</a>; when it goes live, the requesters who left an email are told.</p>`
    : emptyState(
        '<p><strong>No open requests.</strong></p><p>When consumers ask for an API the catalog lacks, it shows here.</p>',
      );
  return {
    section: 'provider',
    title: 'Requests for missing APIs',
    body: `${subNav('/console/provider/requests')}${body}`,
  };
};
