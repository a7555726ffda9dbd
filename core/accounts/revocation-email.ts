/** The mail an owner gets when proving their email by code revoked what the org had before (issue 21, item 1). */
import type { RevokedCredentials } from './unproven-org.js';
import { escapeHtml } from '../html.js';
import type { MailMessage } from '../mail/mailer.js';

export function revokedBeforeProofEmail(to: string, revoked: RevokedCredentials): MailMessage {
  const lines = [
    `Organization: ${revoked.orgId}`,
    revoked.keys.length
      ? `API keys revoked (${revoked.keys.length}): ${revoked.keys.map((k) => `${k.id} ("${k.name}")`).join(', ')}`
      : 'API keys revoked: none',
    `Sessions ended: ${revoked.sessions}`,
    `Agent-tool (MCP) sessions ended: ${revoked.mcpSessions}`,
    `OAuth grants revoked: ${revoked.oauthGrants}`,
    ...(revoked.autoReloadTurnedOff ? ['Auto-reload: turned off'] : []),
  ];
  const intro = [
    'You proved this email address with a sign-in code for the first time.',
    'Until then anyone could have signed up with it, so everything the account had before that moment was revoked:',
  ];
  const outro =
    'Your own new session is not affected. Create new API keys from your session (POST /v1/keys or the console); ' +
    'if you did not sign up yourself, someone else did, and nothing they held still works.';
  return {
    to,
    subject: 'Your marketplace account: access created before you proved your email was revoked',
    text: [...intro, '', ...lines, '', outro].join('\n'),
    html: `${intro.map((l) => `<p>${escapeHtml(l)}</p>`).join('\n')}
<ul>${lines.map((l) => `<li>${escapeHtml(l)}</li>`).join('')}</ul>
<p>${escapeHtml(outro)}</p>`,
  };
}
