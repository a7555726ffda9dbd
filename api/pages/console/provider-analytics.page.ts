/** Console · Provider · Analytics (GMV, calls, fees and payouts per day) and the open requests for missing APIs. */
import { escapeHtml } from '../../../core/html.js';
import { AnalyticsQuery } from '../../../core/providers/analytics.service.js';
import { providerDaily } from '../../../core/providers/console-reads.js';
import { barChart, lineChart } from '../charts.js';
import { emptyState, money } from './shell.js';
import { formQuery } from './provider-forms.js';
import { parseForm, when } from './forms.js';
import { subNav, type ProviderView } from './provider-common.js';

// ---- analytics ------------------------------------------------------------------------------------------------

export const analyticsView: ProviderView = async (services, ctx, person) => {
  const query = formQuery(ctx);
  const { done: _done, ...range } = query;
  const view = await services.analytics.provider(person, parseForm(AnalyticsQuery, range));
  const days = await providerDaily(services.orm, person.orgId, new Date(view.range.from), new Date(view.range.to));
  const t = view.totals;
  const card = (label: string, value: string) =>
    `<div class="card"><div class="muted">${label}</div><div class="figure">${value}</div></div>`;
  const perDay = (pick: (d: (typeof days)[number]) => number) =>
    days.map((d) => ({ label: d.day.slice(5), value: pick(d) }));
  const charts = `${barChart(
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
    { name: 'Platform fees', points: perDay((d) => d.platform_fee_cents) },
  ],
  { title: 'Payouts and platform fees per day', format: money, empty: 'No payouts or fees in this range.' },
)}`;
  const byApi = view.by_api.length
    ? `${barChart([{ name: 'GMV', points: view.by_api.slice(0, 12).map((a) => ({ label: a.slug.slice(0, 18), value: a.gmv_cents })) }], { title: 'GMV by API', format: money, empty: 'No API earned in this range.' })}
<table><caption class="visually-hidden">By API</caption><thead><tr><th scope="col">API</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Successful</th><th scope="col" class="num">GMV</th></tr></thead><tbody>${view.by_api
        .map(
          (a) =>
            `<tr><td><a href="/console/provider/apis/${encodeURIComponent(a.api_id)}">${escapeHtml(a.slug)}</a></td><td class="num">${a.calls}</td><td class="num">${a.successful_calls}</td><td class="num">${money(a.gmv_cents)}</td></tr>`,
        )
        .join('')}</tbody></table>`
    : emptyState(
        '<p><strong>No APIs yet</strong>, so no analytics. <a href="/console/provider">Create an API</a>.</p>',
      );
  return {
    section: 'provider',
    title: 'Analytics',
    body: `${subNav('/console/provider/analytics')}
<form class="filters" method="get" action="/console/provider/analytics">
<div><label for="from">From</label><input id="from" name="from" type="date" value="${escapeHtml(query.from ?? view.range.from.slice(0, 10))}"></div>
<div><label for="to">To</label><input id="to" name="to" type="date" value="${escapeHtml(query.to ?? '')}"></div>
<div><button type="submit">Show</button></div></form>
<p class="muted">${escapeHtml(when(view.range.from))} to ${escapeHtml(when(view.range.to))}</p>
<div class="cards">${card('Calls', t.calls.toLocaleString('en-US'))}${card('Successful calls', t.successful_calls.toLocaleString('en-US'))}${card('GMV', money(t.gmv_cents))}${card('Earnings', money(t.provider_earnings_cents))}${card('Platform fees', money(t.platform_fee_cents))}${card('Net', money(t.net_earnings_cents))}${card('Paid out', money(t.payouts_cents))}</div>
<div class="charts">${charts}</div>
<section aria-labelledby="by-api-h"><h2 id="by-api-h">By API</h2>${byApi}</section>`,
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
