/**
 * Double opt-in for the demand board (issue 31, section 8). An email left with an API request is told when a matching
 * listing goes live only if it is proven: a verified address of a user of the requesting org (notify-address.ts), or an
 * address whose owner confirmed it from the one confirmation mail we send. That mail carries a link to a page (GET
 * shows the request, a CSRF'd POST confirms: mail scanners follow links), never the requester's words; the link's
 * token is stored as its SHA-256 and works for 7 days, after which an unconfirmed address is forgotten
 * (confirmation-link.ts). Confirmation mails are rate-limited per address and per requesting org: past a limit the
 * request is refused with 429 `rate_limited` and Retry-After, and nothing is recorded (docs/decisions.md, issue 31).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { hitLimit } from '../accounts/identity-rules.js';
import type { CounterStore } from '../counters/index.js';
import { randomString, sha256Hex } from '../crypto.js';
import { toDate } from '../db/sql.js';
import { escapeHtml } from '../html.js';
import type { MailMessage } from '../mail/mailer.js';
import type { EmailStatus } from './demand.schemas.js';
import { provenNotifyAddress } from './notify-address.js';

/** How long a confirmation link works; an address still unconfirmed then is forgotten. */
export const CONFIRMATION_TTL_MS = 7 * 24 * 3_600_000;

export const CONFIRMATION_LIMITS = {
  /** Confirmation mails to one address, from every requester: its owner is never flooded. */
  perAddress: { limit: 1, windowMs: 3_600_000 },
  /** Confirmation mails one requesting org causes in a day. */
  perOrg: { limit: 10, windowMs: 24 * 3_600_000 },
} as const;

/** The page the confirmation link opens (api/pages/demand-confirm.page.ts). */
export const CONFIRM_PATH = '/api-requests/confirm';

/** The vote's email state, as the request upsert returns it. */
export interface VoteEmailRow {
  id: string;
  email: string | null;
  email_confirmed_at: Date | string | null;
  email_token_expires_at: Date | string | null;
}

export interface EmailOutcome {
  status: EmailStatus;
  /** The address that will be told (proven or confirmed), else null. */
  notifyEmail: string | null;
  note: string;
  /** The confirmation mail to send once the vote is committed (only with `confirmation_sent`). */
  mail?: MailMessage;
}

export function confirmationEmail(to: string, link: string, publicBase: string): MailMessage {
  const days = CONFIRMATION_TTL_MS / 86_400_000;
  return {
    to,
    subject: 'Confirm your email for an API request',
    text: [
      `Someone asked the API marketplace at ${publicBase} to tell ${to} when an API they requested is published.`,
      `To get that one message, open this link and press "Confirm" (it works for ${days} days):`,
      link,
      '',
      `If it was not you, ignore this mail: the address is forgotten in ${days} days and we send nothing else.`,
    ].join('\n'),
    html: `<p>Someone asked the API marketplace at ${escapeHtml(publicBase)} to tell ${escapeHtml(to)} when an API they requested is published.</p>
<p>To get that one message, <a href="${escapeHtml(link)}">open this link</a> and press “Confirm” (it works for ${days} days).</p>
<p>If it was not you, ignore this mail: the address is forgotten in ${days} days and we send nothing else.</p>`,
  };
}

const NOTES: Record<EmailStatus, (email: string) => string> = {
  confirmed: (email) => `${email} will be told once when a matching API is published.`,
  confirmation_sent: (email) =>
    `A confirmation mail was sent to ${email}: it will be told when a matching API is published only after the ` +
    `link in that mail is confirmed (within ${CONFIRMATION_TTL_MS / 86_400_000} days; else the address is forgotten).`,
  confirmation_pending: (email) =>
    `A confirmation mail was already sent to ${email} and its link still works: confirm from that mail to be told ` +
    'when a matching API is published (no second mail was sent).',
};

export class EmailConfirmations {
  constructor(private readonly deps: { counters: CounterStore; publicBase: string }) {}

  /**
   * Record `email` on the vote (inside the request's transaction) and say what becomes of it: a proven address is
   * kept as confirmed; an unproven one already confirmed or pending on this vote stays so; any other gets a new
   * token and a confirmation mail, within the limits (429 past them, rolling the whole request back).
   */
  async record(em: EntityManager, orgId: string, vote: VoteEmailRow, email: string, now: Date): Promise<EmailOutcome> {
    const address = email.toLowerCase();
    const outcome = (status: EmailStatus, notifyEmail: string | null, mail?: MailMessage): EmailOutcome => ({
      status,
      notifyEmail,
      note: NOTES[status](address),
      ...(mail ? { mail } : {}),
    });
    const proven = await provenNotifyAddress(em, orgId, address);
    if (proven) {
      await em.execute(
        `update api_request_votes set email = ?, email_token_hash = null, email_confirmation_sent_at = null,
           email_token_expires_at = null, email_confirmed_at = null where id = ?`,
        [proven, vote.id],
      );
      return outcome('confirmed', proven);
    }
    if (vote.email === address && vote.email_confirmed_at) return outcome('confirmed', address);
    if (vote.email === address && vote.email_token_expires_at && toDate(vote.email_token_expires_at) > now) {
      return outcome('confirmation_pending', null);
    }
    await this.limit(orgId, address);
    const token = randomString(43);
    await em.execute(
      `update api_request_votes set email = ?, email_token_hash = ?, email_confirmation_sent_at = ?,
         email_token_expires_at = ?, email_confirmed_at = null where id = ?`,
      [address, sha256Hex(token), now, new Date(now.getTime() + CONFIRMATION_TTL_MS), vote.id],
    );
    const link = `${this.deps.publicBase}${CONFIRM_PATH}?token=${token}`;
    return outcome('confirmation_sent', null, confirmationEmail(address, link, this.deps.publicBase));
  }

  private async limit(orgId: string, address: string): Promise<void> {
    await hitLimit(
      this.deps.counters,
      `demand-confirm:org:${orgId}`,
      CONFIRMATION_LIMITS.perOrg,
      `This organization has asked for ${CONFIRMATION_LIMITS.perOrg.limit} email confirmations in the last 24 hours; ` +
        'nothing was recorded. Ask again later, or without `email`.',
    );
    await hitLimit(
      this.deps.counters,
      `demand-confirm:email:${sha256Hex(address)}`,
      CONFIRMATION_LIMITS.perAddress,
      'A confirmation mail went to this address less than an hour ago (at most one an hour, to protect its owner); ' +
        'nothing was recorded. Ask again later, or without `email`.',
    );
  }
}
