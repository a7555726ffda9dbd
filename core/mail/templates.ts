/** The messages we send, as text and HTML. Values are escaped for HTML; links are absolute. */
import { escapeHtml } from '../html.js';
import type { MailMessage } from './mailer.js';

export function verificationEmail(to: string, publicBaseUrl: string, token: string): MailMessage {
  const link = `${publicBaseUrl}/verify-email?token=${encodeURIComponent(token)}`;
  return {
    to,
    subject: 'Verify your email for the API marketplace',
    text: [
      'Welcome to the API marketplace.',
      '',
      'Verify your email to unlock billing and provider features and your $1.00 starter credit:',
      link,
      '',
      `Verification token: ${token}`,
      '',
      'The link works for 24 hours. If you did not sign up, ignore this message.',
    ].join('\n'),
    html: `<p>Welcome to the API marketplace.</p>
<p>Verify your email to unlock billing and provider features and your $1.00 starter credit:</p>
<p><a href="${escapeHtml(link)}">Verify my email</a></p>
<p>Verification token: <code>${escapeHtml(token)}</code></p>
<p>The link works for 24 hours. If you did not sign up, ignore this message.</p>`,
  };
}

export function loginCodeEmail(to: string, code: string): MailMessage {
  return {
    to,
    subject: `Your sign-in code: ${code}`,
    text: [
      `Your code: ${code}`,
      '',
      'It works once, for 10 minutes. If you did not ask for it, ignore this message.',
    ].join('\n'),
    html: `<p>Your code: <strong>${escapeHtml(code)}</strong></p>
<p>It works once, for 10 minutes. If you did not ask for it, ignore this message.</p>`,
  };
}

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
