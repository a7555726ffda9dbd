/** The messages we send, as text and HTML. Values are escaped for HTML; links are absolute. */
import { escapeHtml } from '../html.js';
import type { MailMessage } from './mailer.js';

/**
 * The verification link. `signup`: a person signed up (the trial credit waits for it). `attach`: an agent's
 * anonymous account asked to attach this address (its key gains billing and provider scopes; no trial credit).
 */
export function verificationEmail(
  to: string,
  publicBaseUrl: string,
  token: string,
  kind: 'signup' | 'attach' = 'signup',
): MailMessage {
  const link = `${publicBaseUrl}/verify-email?token=${encodeURIComponent(token)}`;
  const intro =
    kind === 'signup'
      ? [
          'Welcome to the API marketplace.',
          'Verify your email to unlock billing and provider features and your $1.00 starter credit:',
        ]
      : [
          'An API key of an API marketplace account asked to attach this address; verifying makes you its owner.',
          'Verify your email to become the owner and unlock billing and provider features for that key:',
        ];
  const ignore =
    kind === 'signup'
      ? 'If you did not sign up, ignore this message.'
      : 'If you did not expect this, ignore this message.';
  return {
    to,
    subject: 'Verify your email for the API marketplace',
    text: [
      intro[0],
      '',
      intro[1],
      link,
      '',
      `Verification token: ${token}`,
      '',
      `The link works for 24 hours. ${ignore}`,
    ].join('\n'),
    html: `<p>${escapeHtml(intro[0]!)}</p>
<p>${escapeHtml(intro[1]!)}</p>
<p><a href="${escapeHtml(link)}">Verify my email</a></p>
<p>Verification token: <code>${escapeHtml(token)}</code></p>
<p>The link works for 24 hours. ${escapeHtml(ignore)}</p>`,
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
