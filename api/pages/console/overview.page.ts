/**
 * Console · Overview: the org's balance and billing mode, this month's spend, spend and calls per day for the last
 * 30 days (SVG charts), calls and error rate, and the low-balance and suspension banners. Numbers come from the
 * same services as `GET /v1/billing/balance` and `GET /v1/usage` (docs/console.md).
 */
import type Router from '@koa/router';
import { requireScope } from '../../../core/auth/scopes.js';
import { startOfUtcDay } from '../../../core/keys/key-admin.service.js';
import type { Services } from '../../../platform/services.js';
import type { UsageDay } from '../../../core/usage/usage.service.js';
import type { AppState } from '../../context.js';
import { barChart } from '../charts.js';
import { accountBanners } from './consumer-common.js';
import { consolePage, emptyState, money } from './shell.js';

const DAY_MS = 86_400_000;
/** Days in the overview's charts (today included). */
export const OVERVIEW_DAYS = 30;

const percent = (part: number, whole: number) => (whole === 0 ? '0%' : `${((100 * part) / whole).toFixed(1)}%`);
const count = (n: number) => n.toLocaleString('en-US');

function card(label: string, figure: string, note = ''): string {
  return `<div class="card"><div class="muted">${label}</div><div class="figure">${figure}</div>${note ? `<div class="muted">${note}</div>` : ''}</div>`;
}

function charts(days: UsageDay[]): string {
  const spend = barChart([{ name: 'Spend', points: days.map((d) => ({ label: d.day, value: d.cost_cents })) }], {
    title: `Spend per day, last ${OVERVIEW_DAYS} days (UTC)`,
    format: money,
    empty: `No spend in the last ${OVERVIEW_DAYS} days.`,
  });
  const calls = barChart(
    [
      { name: 'Calls', points: days.map((d) => ({ label: d.day, value: d.calls })) },
      { name: 'Failed calls', points: days.map((d) => ({ label: d.day, value: d.failed })) },
    ],
    { title: `Calls per day, last ${OVERVIEW_DAYS} days (UTC)`, empty: `No calls in the last ${OVERVIEW_DAYS} days.` },
  );
  return `<div class="charts">${spend}${calls}</div>`;
}

export function overviewConsole(services: Services, router: Router<AppState>): void {
  router.get(
    '/console',
    consolePage(services, 'overview', async (_ctx, person) => {
      requireScope(person, 'usage:read');
      const now = services.clock.now();
      const today = startOfUtcDay(now);
      const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
      const to = new Date(today.getTime() + DAY_MS);
      const [account, days, month] = await Promise.all([
        services.billing.account(person),
        services.usage.daily(person, { from: new Date(today.getTime() - (OVERVIEW_DAYS - 1) * DAY_MS), to }),
        services.usage.daily(person, { from: monthStart, to }),
      ]);
      const calls = days.reduce((a, d) => a + d.calls, 0);
      const failed = days.reduce((a, d) => a + d.failed, 0);
      const monthSpend = month.reduce((a, d) => a + d.cost_cents, 0);
      const mode =
        account.billing_mode === 'card'
          ? card('Billing mode', 'Card on file', 'usage beyond credits is charged to the card')
          : card('Billing mode', 'Prepaid', 'paid calls draw on your credits');
      const owed = account.billable_cents > 0 ? `${money(account.billable_cents)} owed, to be charged` : '';
      const body = `<section aria-labelledby="figures"><h2 id="figures" class="visually-hidden">Figures</h2>
<div class="cards">
${card('Balance', money(account.credit_cents), owed)}
${mode}
${card('Spend this month', money(monthSpend), `since ${monthStart.toISOString().slice(0, 10)} (UTC)`)}
${card(`Calls, last ${OVERVIEW_DAYS} days`, count(calls), `${count(failed)} failed`)}
${card(`Error rate, last ${OVERVIEW_DAYS} days`, percent(failed, calls), 'failed calls of all calls')}
</div></section>
<h2>Activity</h2>
${
  calls === 0
    ? emptyState(
        `No calls in the last ${OVERVIEW_DAYS} days. Create a key in <a href="/console/keys">Keys</a>, then call an API ` +
          `from the <a href="/console/catalog">Catalog</a> with it; spend and calls appear here.`,
      )
    : charts(days)
}
<p class="muted">Details per call: <a href="/console/usage">Usage</a>. Credits and history: <a href="/console/billing">Billing</a>.</p>`;
      return { section: 'overview', title: 'Overview', banners: accountBanners(account), body };
    }),
  );
}
