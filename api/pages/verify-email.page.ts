/**
 * The page the verification link opens (issue 21, item 1): the same facts as the mail (which org, made when and how,
 * which key gains what), then a button. Opening the page changes nothing; the button's POST verifies.
 */
import type { VerificationFacts } from '../../core/accounts/verification-facts.js';
import { verificationFactLines } from '../../core/accounts/verification-facts.js';
import { escapeHtml } from './layout.js';

export function verifyEmailConfirmation(facts: VerificationFacts, csrf: string, token: string): string {
  const { facts: lines, warning } = verificationFactLines(facts, '/login');
  return `<p>Confirm <strong>${escapeHtml(facts.email)}</strong> for this organization only if you made it:</p>
<ul>${lines.map((l) => `<li>${escapeHtml(l)}</li>`).join('')}</ul>
<p class="error" role="note"><strong>${escapeHtml(warning)}</strong></p>
<form method="post" action="/verify-email">
  <input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
  <input type="hidden" name="token" value="${escapeHtml(token)}">
  <button type="submit">Verify my email</button>
</form>
<p class="muted"><a href="/login">Sign in with a code instead</a></p>`;
}
