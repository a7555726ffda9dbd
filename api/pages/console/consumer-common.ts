/**
 * What the consumer sections of the console (Overview, Keys, Usage, Billing) share: the account banners (low
 * balance, suspension) and the UTC day (dollar inputs: ../dollars.ts). The form helpers every
 * section uses are in forms.ts. The rules for the banners are in docs/console.md.
 */
import type { AccountView } from '../../../core/billing/billing.service.js';
import { escapeHtml } from '../../../core/html.js';
import { banner, money } from './shell.js';

/** Below this a prepaid balance (without auto-reload) shows the low-balance banner. */
export const LOW_BALANCE_CENTS = 100;

/** The low-balance and suspension banners for the org's account (none when all is well). */
export function accountBanners(account: AccountView): string[] {
  const out: string[] = [];
  if (account.suspended) {
    const reason = account.suspended_reason ? ` Reason: ${escapeHtml(account.suspended_reason)}.` : '';
    out.push(
      banner(
        'bad',
        `<strong>This organization is suspended: all its calls are refused, free ones too.</strong>${reason} ` +
          `Add or update your card in <a href="/console/billing">Billing</a> (the card portal) or buy credits; ` +
          `if the reason is not about payment, reply to the email we sent you or contact the operator.`,
      ),
    );
  }
  const low = lowBalance(account);
  if (low) out.push(banner('warn', low));
  return out;
}

/** The low-balance message, or undefined (rules in docs/console.md). */
export function lowBalance(account: AccountView): string | undefined {
  if (account.billing_mode !== 'prepaid') return undefined;
  const balance = money(account.credit_cents);
  if (account.auto_reload_enabled && account.auto_reload_threshold_cents != null) {
    if (account.credit_cents >= account.auto_reload_threshold_cents) return undefined;
    return (
      `<strong>Low balance: ${balance}.</strong> It is below your auto-reload threshold ` +
      `(${money(account.auto_reload_threshold_cents)}), so a reload of ${money(account.auto_reload_amount_cents ?? 0)} ` +
      `is on its way. If the balance does not rise, check your card in <a href="/console/billing">Billing</a>.`
    );
  }
  if (account.credit_cents >= LOW_BALANCE_CENTS) return undefined;
  return (
    `<strong>Low balance: ${balance}.</strong> Paid calls are refused once it reaches $0.00. ` +
    `<a href="/console/billing">Buy credits or turn on auto-reload</a>.`
  );
}

/** A UTC day `YYYY-MM-DD`. */
export function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}
