/**
 * Who the demand board may mail (issue 21, item 5). A request's `email` is requester-chosen, and so is the query the
 * "an API you asked for is live" mail quotes: mailing whatever address a request names would let anyone send our mail,
 * with their words in it, to a stranger. So only a proven address is ever mailed: the verified email of a user of the
 * requesting organization (the requester's own verified address, or a colleague's in the same org). Any other address
 * is accepted with the vote but neither stored nor mailed (docs/decisions.md, "Demand mail goes to proven addresses").
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/** The lower-cased address when a verified user of `orgId` owns it, else null. */
export async function provenNotifyAddress(
  em: EntityManager,
  orgId: string,
  email: string | undefined,
): Promise<string | null> {
  if (!email) return null;
  const rows = await em.execute<{ email: string }[]>(
    `select email from users where org_id = ? and email = lower(?) and email_verified_at is not null limit 1`,
    [orgId, email],
  );
  return rows[0]?.email ?? null;
}

/**
 * The SQL condition, on a vote aliased `v`, that its address is still proven when the mail goes out: votes recorded
 * before this rule, or whose user has since left the org or lost verification, are not mailed.
 */
export const PROVEN_VOTE_EMAIL = `exists (select 1 from users u where u.org_id = v.org_id and u.email = lower(v.email)
  and u.email_verified_at is not null)`;
