/**
 * Which organization an operator command names (issue 31, section 6): its id (`org_…`), its public profile slug (the
 * provider directory's `/providers/{slug}`), or the email of one of its owners. The three forms cannot collide (an id
 * has an underscore a slug cannot have, an email an `@`), and ids, slugs and user emails are each unique, so a name
 * matches at most one org; more than one would be refused all the same, never guessed.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

export type OrgMatch = 'id' | 'slug' | 'owner email';

/** A name that matches no org, or more than one: the message says which forms were tried (exit code 1). */
export class OrgLookupError extends Error {}

export async function resolveOrg(em: EntityManager, name: string): Promise<{ id: string; matchedBy: OrgMatch }> {
  const rows = await em.execute<{ id: string; by: OrgMatch }[]>(
    `select id, 'id' as by from orgs where id = ?
     union select org_id, 'slug' from profiles where slug = lower(?)
     union select org_id, 'owner email' from users where email = lower(?) and role = 'owner'`,
    [name, name, name],
  );
  const ids = [...new Set(rows.map((r) => r.id))];
  if (ids.length === 1) return { id: ids[0]!, matchedBy: rows[0]!.by };
  if (ids.length > 1) {
    const list = rows.map((r) => `${r.id} (by ${r.by})`).join(', ');
    throw new OrgLookupError(`"${name}" names more than one organization: ${list}; give the org id.`);
  }
  const [member] = await em.execute<{ org_id: string; role: string }[]>(
    `select org_id, role from users where email = lower(?)`,
    [name],
  );
  if (member) {
    throw new OrgLookupError(
      `${name.toLowerCase()} is a user of ${member.org_id} with the role ${member.role}, not an owner: give the org id ` +
        "or an owner's email.",
    );
  }
  throw new OrgLookupError(`no organization matches "${name}" by id, profile slug or owner email.`);
}
