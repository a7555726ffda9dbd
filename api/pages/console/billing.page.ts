/**
 * Console · Billing: balance and billing mode, credit packs (each a button to Stripe Checkout), card setup and the
 * Stripe customer portal (buttons that answer 303 to Stripe's hosted page), auto-reload settings, and the org's
 * ledger history (paginated). Writes go through `services.billing` with the person and need `billing:write`, as the
 * `/v1/billing/*` routes do; the page's CSP lets its forms continue to Stripe's hosted pages and nowhere else.
 */
import type Router from '@koa/router';
import type { AccountView } from '../../../core/billing/billing.service.js';
import { AutoReloadBody, CheckoutBody, PACKS } from '../../../core/billing/billing.schemas.js';
import { type AppError, InternalError, ServiceUnavailableError, ValidationError } from '../../../core/errors.js';
import { escapeHtml } from '../../../core/html.js';
import type { LedgerHistoryRow } from '../../../core/billing/ledger.service.js';
import type { SessionPrincipal } from '../../../core/sessions/sessions.service.js';
import type { Services } from '../../../platform/services.js';
import type { AppContext, AppState } from '../../context.js';
import { PAGE_CSP } from '../layout.js';
import { csrfToken, hidden } from '../forms.js';
import { fieldMessage, FormError, fixable, type FormProblems, invalidAttrs, problemSummary } from '../form-errors.js';
import { centsFromDollars, dollarsValue } from '../dollars.js';
import { accountBanners } from './consumer-common.js';
import { flash, parseForm, seeOther, when } from './forms.js';
import { consoleForm, consolePage, emptyState, money, renderConsole, type ConsoleView } from './shell.js';

const HISTORY_PAGE = 25;
/** Where Stripe's hosted pages live: the billing page's forms may continue there (CSP `form-action`). */
export const STRIPE_HOSTED = ['https://checkout.stripe.com', 'https://billing.stripe.com'];
const BILLING_CSP = PAGE_CSP.replace("form-action 'self'", `form-action 'self' ${STRIPE_HOSTED.join(' ')}`);

const DONE = {
  checkout: 'Thanks. Your credits are added as soon as the payment is confirmed (usually within seconds).',
  cancelled: 'Checkout cancelled: nothing was charged.',
  'auto-reload': 'Auto-reload settings saved.',
};

const KIND_LABELS: Record<string, string> = {
  grant: 'Credit grant',
  purchase: 'Purchase',
  auto_reload: 'Auto-reload',
  usage: 'Paid calls',
  refund: 'Refund',
  adjustment: 'Adjustment',
  provider_earning: 'Earnings',
  platform_fee: 'Marketplace fee',
  payout: 'Payout',
  chargeback: 'Chargeback',
};

function summary(account: AccountView): string {
  const mode = account.billing_mode === 'card' ? 'Card on file' : 'Prepaid credits';
  const owed = account.billable_cents > 0 ? ` · ${money(account.billable_cents)} owed, to be charged to the card` : '';
  return `<div class="cards">
<div class="card"><div class="muted">Balance</div><div class="figure">${money(account.credit_cents)}</div><div class="muted">${mode}${owed}</div></div>
<div class="card"><div class="muted">Payment method</div><div class="figure">${account.has_payment_method ? 'Card saved' : 'None'}</div></div>
<div class="card"><div class="muted">Auto-reload</div><div class="figure">${account.auto_reload_enabled ? 'On' : 'Off'}</div>${
    account.auto_reload_enabled
      ? `<div class="muted">adds ${money(account.auto_reload_amount_cents ?? 0)} below ${money(account.auto_reload_threshold_cents ?? 0)}</div>`
      : ''
  }</div>
</div>`;
}

function packs(csrf: string): string {
  return `<div class="packs">${PACKS.map(
    (
      p,
    ) => `<form method="post" action="/console/billing/checkout" class="card">${hidden('csrf', csrf)}${hidden('pack', p.name)}
<div class="figure">${money(p.credit_cents)}</div><div class="muted">of credit for ${money(p.price_cents)}</div>
<button type="submit">Buy ${escapeHtml(p.name)}<span class="visually-hidden"> pack, ${money(p.price_cents)}</span></button></form>`,
  ).join('')}</div>`;
}

/** With `npm start`'s embedded payments (no Stripe account), the pages a payment continues on and what is missing. */
const EMBEDDED_NOTE = `<p class="muted">Test mode: this marketplace runs on embedded payments (no Stripe account is
configured), so buying credits and saving a card continue on its own test pages and no card is charged. The billing
portal (invoices, receipts) comes with a Stripe account (<code>STRIPE_SECRET_KEY</code>).</p>`;

function cardForms(csrf: string, account: AccountView, embedded: boolean): string {
  const card = `<form method="post" action="/console/billing/card" class="inline">${hidden('csrf', csrf)}<button type="submit">${account.has_payment_method ? 'Replace card' : 'Add a card'}</button></form>`;
  const charged = 'With a card saved, usage beyond your credits is charged to it.';
  if (embedded) return `${card}\n<p class="muted">${charged}</p>\n${EMBEDDED_NOTE}`;
  return `${card}
<form method="post" action="/console/billing/portal" class="inline">${hidden('csrf', csrf)}<button type="submit">Open the billing portal</button></form>
<p class="muted">Both continue on Stripe's hosted pages. ${charged}</p>`;
}

/** The auto-reload form's fields by the billing route's schema (form-errors.ts). */
const AUTO_RELOAD_FIELDS = {
  enabled: { id: 'ar-enabled', label: 'Reload automatically' },
  threshold_cents: { id: 'ar-threshold', label: 'When the balance falls below' },
  amount_cents: { id: 'ar-amount', label: 'Add' },
};

/** A refused auto-reload form: what was typed and the messages beside the fields. */
interface RefusedReload {
  typed: Record<string, string>;
  problems: FormProblems;
}

function autoReloadForm(csrf: string, account: AccountView, refused?: RefusedReload): string {
  const p = refused?.problems;
  const typed = refused?.typed;
  const value = (name: string, cents: number | null) => escapeHtml(typed ? (typed[name] ?? '') : dollarsValue(cents));
  const enabled = typed ? typed.enabled === 'on' : account.auto_reload_enabled;
  return `${problemSummary(p)}<form method="post" action="/console/billing/auto-reload" class="panel">${hidden('csrf', csrf)}
<label for="ar-enabled"><input type="checkbox" id="ar-enabled" name="enabled"${enabled ? ' checked' : ''}> Reload automatically</label>
<div class="cap-fields">
<div><label for="ar-threshold">When the balance falls below (USD)</label><input id="ar-threshold" name="threshold" inputmode="decimal" size="9" value="${value('threshold', account.auto_reload_threshold_cents)}"${invalidAttrs(p, 'ar-threshold')}>${fieldMessage(p, 'ar-threshold')}</div>
<div><label for="ar-amount">Add (USD)</label><input id="ar-amount" name="amount" inputmode="decimal" size="9" value="${value('amount', account.auto_reload_amount_cents)}"${invalidAttrs(p, 'ar-amount')}>${fieldMessage(p, 'ar-amount')}</div>
</div>
${account.has_payment_method ? '' : '<p class="muted">Add a card first: reloads are charged to it.</p>'}
<button type="submit">Save auto-reload</button></form>`;
}

function history(rows: LedgerHistoryRow[], page: number, hasMore: boolean): string {
  if (rows.length === 0) {
    return emptyState(
      page > 1
        ? 'No entries on this page. <a href="/console/billing">Back to the newest</a>.'
        : 'No credit movements yet. Buy a pack above; grants, purchases and paid calls are listed here.',
    );
  }
  const body = rows
    .map(
      (r) => `<tr><td>${when(r.created_at)}</td><td>${escapeHtml(KIND_LABELS[r.kind] ?? r.kind)}</td>
<td class="num">${money(r.amount_cents)}</td><td class="num">${money(r.balance_after_cents)}</td>
<td>${escapeHtml(r.description.slice(0, 200))}</td></tr>`,
    )
    .join('\n');
  const link = (p: number, label: string, rel: string) =>
    `<a rel="${rel}" href="/console/billing?page=${p}#history">${label}</a>`;
  const pager =
    page > 1 || hasMore
      ? `<nav class="pager" aria-label="History pages">${page > 1 ? link(page - 1, '← Newer', 'prev') : ''}<span>Page ${page}</span>${hasMore ? link(page + 1, 'Older →', 'next') : ''}</nav>`
      : '';
  return `<table><caption class="visually-hidden">Ledger history, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Kind</th><th scope="col" class="num">Amount</th>
<th scope="col" class="num">Balance after</th><th scope="col">What</th></tr></thead><tbody>${body}</tbody></table>${pager}`;
}

function pageOf(ctx: AppContext): number {
  const raw = ctx.query.page;
  if (raw === undefined || raw === '') return 1;
  const n = Number(raw);
  if (typeof raw !== 'string' || !Number.isInteger(n) || n < 1 || n > 100_000) {
    throw new ValidationError('page: must be a whole number from 1.');
  }
  return n;
}

async function billingView(
  ctx: AppContext,
  services: Services,
  person: SessionPrincipal,
  refused?: RefusedReload & { status: number },
): Promise<ConsoleView> {
  const page = pageOf(ctx);
  const [account, ledger] = await Promise.all([
    services.billing.account(person),
    services.ledger.history(person.orgId, { limit: HISTORY_PAGE, offset: (page - 1) * HISTORY_PAGE }),
  ]);
  const csrf = csrfToken(ctx);
  const canPay = person.scopes.includes('billing:write');
  // Without the forms (no billing:write, no Stripe) a refusal is said above them (a posted form, by hand).
  const payments = !canPay
    ? `${problemSummary(refused?.problems)}<p class="muted">Verify your email (the link in the mail we sent you) to buy credits and add a card.</p>`
    : !services.stripe
      ? `${problemSummary(refused?.problems)}<p class="muted">Payments are not configured on this marketplace, so credits cannot be bought here.</p>`
      : `<h2>Buy credits</h2>${packs(csrf)}<h2>Card</h2>${cardForms(csrf, account, !!services.embeddedPayments)}<h2 id="auto-reload">Auto-reload</h2>${autoReloadForm(csrf, account, refused)}`;
  return {
    section: 'billing',
    title: 'Billing',
    status: refused?.status,
    banners: [...accountBanners(account), ...flash(ctx, DONE)],
    body: `${summary(account)}\n${payments}\n<h2 id="history">History</h2>\n${history(ledger.items, page, ledger.pagination.has_more)}`,
  };
}

/** The auto-reload form → the route's body; each amount refused beside its input, both needed to turn it on. */
function autoReloadInput(form: Record<string, string>): AutoReloadBody {
  const problems: Record<string, string> = {};
  const cents = (name: string, id: string, label: string) => {
    try {
      return centsFromDollars(form[name], label);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      problems[id] = err.message;
      return null;
    }
  };
  const threshold = cents('threshold', 'ar-threshold', 'When the balance falls below');
  const amount = cents('amount', 'ar-amount', 'Add');
  const enabled = form.enabled === 'on';
  if (enabled && threshold === null)
    problems['ar-threshold'] ??= 'When the balance falls below: enter an amount to reload automatically.';
  if (enabled && amount === null) problems['ar-amount'] ??= 'Add: enter an amount to reload automatically.';
  if (Object.keys(problems).length) throw new FormError(problems);
  return parseForm(
    AutoReloadBody,
    {
      enabled,
      ...(threshold === null ? {} : { threshold_cents: threshold }),
      ...(amount === null ? {} : { amount_cents: amount }),
    },
    AUTO_RELOAD_FIELDS,
  );
}

/** A Stripe step: a 303 to Stripe's hosted page; without Stripe configured, the page says so (503). */
function stripeStep(
  services: Services,
  step: (form: Record<string, string>, person: SessionPrincipal) => Promise<string | null>,
) {
  return consoleForm(services, 'billing', 'billing:write', async (ctx, person, form) => {
    let url: string | null;
    try {
      url = await step(form, person);
    } catch (err) {
      if (!(err instanceof ServiceUnavailableError)) throw err;
      return {
        section: 'billing',
        title: 'Billing',
        status: 503,
        body: `<p class="error" role="alert">${escapeHtml(err.message)}</p><p><a href="/console/billing">Back</a></p>`,
      };
    }
    if (!url) throw new InternalError('Stripe returned no page to continue on.');
    seeOther(ctx, url);
  });
}

export function billingConsole(services: Services, router: Router<AppState>): void {
  const base = services.config.urls.publicBase;

  router.get(
    '/console/billing',
    consolePage(services, 'billing', async (ctx, person) => {
      renderConsole(ctx, person, await billingView(ctx, services, person));
      ctx.set('Content-Security-Policy', BILLING_CSP);
    }),
  );

  router.post(
    '/console/billing/checkout',
    stripeStep(services, async (form, person) => {
      const body = parseForm(CheckoutBody, {
        pack: form.pack,
        success_url: `${base}/console/billing?done=checkout`,
        cancel_url: `${base}/console/billing?done=cancelled`,
      });
      return (await services.billing.checkout(person, body)).checkout_url;
    }),
  );

  router.post(
    '/console/billing/card',
    stripeStep(services, async (_form, person) => (await services.billing.setupIntent(person)).url),
  );

  router.post(
    '/console/billing/portal',
    stripeStep(services, async (_form, person) => {
      // stripe-mock answers a made-up host for the portal: say what is missing rather than send the browser nowhere.
      if (services.embeddedPayments) {
        throw new ServiceUnavailableError(
          'The billing portal needs a Stripe account (STRIPE_SECRET_KEY): this marketplace runs on embedded payments, in test mode. Buy credits and save a card on the Billing page.',
        );
      }
      return (await services.billing.portal(person)).url;
    }),
  );

  router.post(
    '/console/billing/auto-reload',
    consoleForm(services, 'billing', 'billing:write', async (ctx, person, form) => {
      try {
        await services.billing.configureAutoReload(person, autoReloadInput(form));
      } catch (err) {
        const problems = fixable(err, AUTO_RELOAD_FIELDS);
        if (!problems) throw err;
        const status = (err as AppError).status;
        const view = await billingView(ctx, services, person, { typed: form, problems, status });
        renderConsole(ctx, person, view);
        ctx.set('Content-Security-Policy', BILLING_CSP);
        return;
      }
      seeOther(ctx, '/console/billing?done=auto-reload');
    }),
  );
}
