/** The billing mails: a failed auto-reload or usage charge pauses the account. Values are escaped for HTML. */
import { escapeHtml } from '../html.js';
import type { MailMessage } from '../mail/mailer.js';

export function reloadFailedEmail(to: string, amountCents: number, reason: string): MailMessage {
  const amount = `$${(amountCents / 100).toFixed(2)}`;
  return {
    to,
    subject: 'Auto-reload failed: your marketplace account is paused',
    text: [
      `We could not charge ${amount} to your saved card for auto-reload (${reason}).`,
      'Paid API calls are paused until a payment goes through.',
      'Update your card in the billing portal or buy credits, and calls resume at once.',
    ].join('\n'),
    html: `<p>We could not charge ${escapeHtml(amount)} to your saved card for auto-reload (${escapeHtml(reason)}).</p>
<p>Paid API calls are paused until a payment goes through.</p>
<p>Update your card in the billing portal or buy credits, and calls resume at once.</p>`,
  };
}

export function usageChargeFailedEmail(to: string, amountCents: number, reason: string): MailMessage {
  const amount = `$${(amountCents / 100).toFixed(2)}`;
  return {
    to,
    subject: 'Payment failed: your marketplace account is paused',
    text: [
      `We could not charge ${amount} of API usage to your saved card (${reason}).`,
      'Paid API calls are paused until a payment goes through.',
      'Update your card in the billing portal or buy credits, and calls resume at once.',
    ].join('\n'),
    html: `<p>We could not charge ${escapeHtml(amount)} of API usage to your saved card (${escapeHtml(reason)}).</p>
<p>Paid API calls are paused until a payment goes through.</p>
<p>Update your card in the billing portal or buy credits, and calls resume at once.</p>`,
  };
}
