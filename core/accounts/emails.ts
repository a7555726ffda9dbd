/** The account mails (signup, login codes, email verification), as text and HTML. Values are escaped; links are absolute. */
import { escapeHtml } from '../html.js';
import { verificationFactLines, type VerificationFacts } from './verification-facts.js';
import type { MailMessage } from '../mail/mailer.js';

/**
 * The verification link. It elevates a key someone else may hold (issue 21), so the mail says exactly what clicking
 * does: which org, made when and how, which key gains what, and what to do if that was not you.
 */
export function verificationEmail(
  to: string,
  publicBaseUrl: string,
  token: string,
  facts: VerificationFacts,
): MailMessage {
  const link = `${publicBaseUrl}/verify-email?token=${encodeURIComponent(token)}`;
  const { facts: lines, warning } = verificationFactLines(facts, `${publicBaseUrl}/login`);
  const intro =
    facts.kind === 'signup'
      ? 'Someone signed up to the API marketplace with this address. Verifying it unlocks billing and provider features.'
      : 'An API key of an API marketplace account asked to attach this address; verifying makes you its owner.';
  const open = 'The link opens a page that shows these facts again and asks you to confirm:';
  const after = 'The link works for 24 hours.';
  return {
    to,
    subject: 'Verify your email for the API marketplace',
    text: [intro, '', ...lines, '', warning, '', open, link, '', `Verification token: ${token}`, '', after].join('\n'),
    html: `<p>${escapeHtml(intro)}</p>
<ul>${lines.map((l) => `<li>${escapeHtml(l)}</li>`).join('')}</ul>
<p><strong>${escapeHtml(warning)}</strong></p>
<p>${escapeHtml(open)} <a href="${escapeHtml(link)}">Verify my email</a></p>
<p>Verification token: <code>${escapeHtml(token)}</code></p>
<p>${escapeHtml(after)}</p>`,
  };
}

/** A one-time code: the code, then what it is for and what to do if it was not asked for. */
function codeEmail(to: string, subject: string, code: string, lines: string[]): MailMessage {
  return {
    to,
    subject: `${subject}: ${code}`,
    text: [`Your code: ${code}`, '', ...lines].join('\n'),
    html: [
      `<p>Your code: <strong>${escapeHtml(code)}</strong></p>`,
      ...lines.map((l) => `<p>${escapeHtml(l)}</p>`),
    ].join('\n'),
  };
}

export function loginCodeEmail(to: string, code: string): MailMessage {
  return codeEmail(to, 'Your sign-in code', code, [
    'It works once, for 10 minutes. If you did not ask for it, ignore this message.',
  ]);
}

/** The code of a sign-up in the browser (/signup): proving the address creates the account. */
export function signupCodeEmail(to: string, code: string): MailMessage {
  return codeEmail(to, 'Your sign-up code', code, [
    'Enter it on the sign-up page to create your API marketplace account. It works once, for 10 minutes.',
    'If you did not ask for it, ignore this message: no account is made without it.',
  ]);
}

/**
 * A sign-in asked for an address with no account (issue 22): say so and where to sign up, rather than silence. The
 * page's answer is the same either way, so the page still does not tell a stranger who has an account.
 */
export function noAccountEmail(to: string, publicBaseUrl: string): MailMessage {
  const link = `${publicBaseUrl}/signup?email=${encodeURIComponent(to)}`;
  return {
    to,
    subject: 'No API marketplace account uses this address yet',
    text: [
      'Someone (probably you) asked to sign in to the API marketplace with this address, but no account uses it.',
      `To create one, sign up here: ${link}`,
      '',
      'If you did not ask, ignore this message.',
    ].join('\n'),
    html: `<p>Someone (probably you) asked to sign in to the API marketplace with this address, but no account uses it.</p>
<p><a href="${escapeHtml(link)}">Sign up</a> to create one.</p>
<p>If you did not ask, ignore this message.</p>`,
  };
}
