/**
 * What a refused call asks of a person, in words an agent can relay: added to the details of the gateway's (and the
 * quote's) refusals as `next_step`. The URL a person opens is already in the details when the refusal has one
 * (`approval_url` for terms and for approval-mode spend); buying credits or adding a card starts with a tool that
 * returns the page's URL (create_checkout, billing_setup), so it is named here instead.
 */
import type { Principal } from '../../core/auth/scopes.js';

export function nextStep(
  code: string,
  details: Record<string, unknown> | undefined,
  principal: Principal,
  publicBase: string,
): string | undefined {
  const reason = typeof details?.reason === 'string' ? details.reason : undefined;
  const url = typeof details?.approval_url === 'string' ? details.approval_url : undefined;
  const billing = principal.scopes.includes('billing:write')
    ? ''
    : ' Both need billing:write, which this key gets once an email is verified for it ' +
      `(POST ${publicBase}/v1/me/email with this key; a person opens the mailed link).`;
  switch (code) {
    case 'terms_acceptance_required':
      return `A person (owner or admin of your organization, signed in) must read and accept the terms at ${url}; then call again.`;
    case 'payment_required':
      if (reason === 'approval_required') return `A person must approve more spend for this key at ${url}.`;
      if (reason === 'insufficient_credits') {
        return (
          'Buy credits: create_checkout returns a checkout URL for a person to pay; or add a card: billing_setup ' +
          `returns a card-setup page URL.${billing}`
        );
      }
      if (reason === 'suspended')
        return `A person must settle the account in the billing portal (billing_portal).${billing}`;
      return undefined;
    case 'insufficient_budget':
    case 'daily_cap_exceeded':
    case 'per_call_limit_exceeded':
      return "A key cannot raise its own caps: a person (owner or admin, signed in) must raise this key's cap, or use a cheaper endpoint.";
    default:
      return undefined;
  }
}
