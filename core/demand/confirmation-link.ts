/**
 * The confirmation link of the demand board's double opt-in (email-confirmation.ts): what its page shows (reading
 * changes nothing), confirming (the page's CSRF'd POST), and forgetting unconfirmed addresses once their link expired
 * (the `demand-email-cleanup` Schedule). A link is found by its token's SHA-256 only.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../clock.js';
import { sha256Hex } from '../crypto.js';
import { toDate } from '../db/sql.js';
import { ValidationError } from '../errors.js';
import type { ConfirmationFacts } from './demand.schemas.js';
import { PROVEN_VOTE_EMAIL } from './notify-address.js';
import { CONFIRMATION_TTL_MS } from './email-confirmation.js';

interface LinkRow {
  id: string;
  email: string | null;
  email_confirmed_at: Date | string | null;
  email_token_expires_at: Date | string | null;
  query: string;
  votes: number;
  fulfilled_slug: string | null;
  fulfilled_name: string | null;
}

const LINK_SELECT = `select v.id, v.email, v.email_confirmed_at, v.email_token_expires_at, r.query, r.votes,
    a.slug as fulfilled_slug, a.name as fulfilled_name
  from api_request_votes v join api_requests r on r.id = v.request_id left join apis a on a.id = r.fulfilled_api_id
  where v.email_token_hash = ?`;

/** The link's vote, or the 400 a person reads on the page: unknown (replaced or forgotten) or expired. */
async function findLink(em: EntityManager, token: string, now: Date, lock: boolean): Promise<LinkRow> {
  const [row] = await em.execute<LinkRow[]>(`${LINK_SELECT}${lock ? ' for update of v' : ''}`, [sha256Hex(token)]);
  if (!row?.email || !row.email_token_expires_at) {
    throw new ValidationError(
      'This confirmation link is not valid: it was replaced by a newer one, or the address was already forgotten.',
    );
  }
  if (!row.email_confirmed_at && toDate(row.email_token_expires_at) <= now) {
    throw new ValidationError(
      `This confirmation link has expired (links work for ${CONFIRMATION_TTL_MS / 86_400_000} days) and the ` +
        'address will be forgotten. Ask for the API again with your email to get a new link.',
    );
  }
  return row;
}

const facts = (row: LinkRow, confirmedAt: Date | null): ConfirmationFacts => ({
  email: row.email!,
  query: row.query,
  votes: Number(row.votes),
  fulfilledBy: row.fulfilled_slug ? { slug: row.fulfilled_slug, name: row.fulfilled_name ?? row.fulfilled_slug } : null,
  confirmedAt,
  expiresAt: toDate(row.email_token_expires_at!),
});

export class ConfirmationLinks {
  constructor(private readonly deps: { orm: MikroORM; clock: Clock }) {}

  /** What confirming would do (the page the link opens shows it; nothing changes). */
  async describe(token: string): Promise<ConfirmationFacts> {
    const row = await findLink(this.deps.orm.em.fork(), token, this.deps.clock.now(), false);
    return facts(row, row.email_confirmed_at ? toDate(row.email_confirmed_at) : null);
  }

  /** Confirm the address (once; a second POST answers the same). From now on it is told like a proven address. */
  async confirm(token: string): Promise<ConfirmationFacts> {
    const now = this.deps.clock.now();
    return this.deps.orm.em.fork().transactional(async (em) => {
      const row = await findLink(em, token, now, true);
      if (row.email_confirmed_at) return facts(row, toDate(row.email_confirmed_at));
      await em.execute(`update api_request_votes set email_confirmed_at = ? where id = ?`, [now, row.id]);
      return facts(row, now);
    });
  }

  /**
   * Forget every unconfirmed address whose link has expired, and any stored unproven address without a link (votes
   * recorded before the double opt-in) older than the same 7 days: the email and its link go, the vote stays.
   */
  async forgetUnconfirmed(): Promise<{ forgotten: number }> {
    const now = this.deps.clock.now();
    const rows = await this.deps.orm.em.fork().execute<{ id: string }[]>(
      `update api_request_votes v set email = null, email_token_hash = null, email_confirmation_sent_at = null,
          email_token_expires_at = null
        where v.email is not null and v.email_confirmed_at is null and v.notified_at is null
          and (v.email_token_expires_at <= ?
            or (v.email_token_expires_at is null and v.updated_at <= ? and not ${PROVEN_VOTE_EMAIL}))
        returning v.id`,
      [now, new Date(now.getTime() - CONFIRMATION_TTL_MS)],
    );
    return { forgotten: rows.length };
  }
}
