/** The billing mails: a failed auto-reload or usage charge pauses the account. Values are escaped for HTML. */
import { escapeHtml } from '../html.js';
import type { MailMessage } from '../mail/mailer.js';

/** A failed charge paused the account: what failed, then how calls resume (each line a paragraph in HTML). */
function pausedEmail(to: string, subject: string, failed: string): MailMessage {
  const lines = [
    failed,
    'Paid API calls are paused until a payment goes through.',
    'Update your card in the billing portal or buy credits, and calls resume at once.',
  ];
  return { to, subject, text: lines.join('\n'), html: lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('\n') };
}

export function reloadFailedEmail(to: string, amountCents: number, reason: string): MailMessage {
  const amount = `$${(amountCents / 100).toFixed(2)}`;
  return pausedEmail(
    to,
    'Auto-reload failed: your marketplace account is paused',
    `We could not charge ${amount} to your saved card for auto-reload (${reason}).`,
  );
}

export function usageChargeFailedEmail(to: string, amountCents: number, reason: string): MailMessage {
  const amount = `$${(amountCents / 100).toFixed(2)}`;
  return pausedEmail(
    to,
    'Payment failed: your marketplace account is paused',
    `We could not charge ${amount} of API usage to your saved card (${reason}).`,
  );
}
