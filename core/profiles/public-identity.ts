/**
 * Every provider has a public name and slug from its first listing (issue 22): listings of providers without a
 * profile used to show `provider: {slug: null, name: null}` ("Provider: —" in the console). Creating or publishing an
 * API fills whatever the org's profile lacks: the display name from the org's name, else the API's; the slug from that
 * name, made unique (`weather`, `weather-2`, …) and never a reserved platform slug. Both stay editable
 * (`PATCH /v1/me/profile`); a name or slug the provider already set is never touched.
 */
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Org, Profile } from '../../db/entities/index.js';
import { randomString } from '../crypto.js';
import { isReservedSlug } from './reserved-slugs.js';

const SLUG_MAX = 40;

/** Lower-case letters, digits and inner hyphens, at most 40 characters; '' when nothing usable is left. */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/g, '');
}

/** The candidates for a name's slug: the name itself, then numbered, then with a random tail. */
function* candidates(base: string): Generator<string> {
  for (let n = 1; n <= 6; n++) {
    const tail = n === 1 ? '' : `-${n}`;
    yield `${base.slice(0, SLUG_MAX - tail.length).replace(/-+$/g, '')}${tail}`;
  }
  for (;;) {
    const tail = `-${randomString(6)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, 'x')}`;
    yield `${base.slice(0, SLUG_MAX - tail.length).replace(/-+$/g, '')}${tail}`;
  }
}

/** Fill the org's missing public name and slug. Idempotent; a taken slug moves on to the next candidate. */
export async function ensurePublicIdentity(orm: MikroORM, orgId: string, fallbackName: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const em = orm.em.fork();
    const profile = await em.findOne(Profile, { org: orgId });
    if (profile?.displayName && profile.slug) return;
    const org = await em.findOneOrFail(Org, orgId, { fields: ['id', 'name'] });
    const name = (profile?.displayName ?? org.name ?? fallbackName).trim().slice(0, 80) || 'Provider';
    let slug = profile?.slug ?? null;
    if (!slug) {
      const base = slugify(name) || 'provider';
      for (const candidate of candidates(base)) {
        if (isReservedSlug(candidate)) continue;
        if (!(await em.findOne(Profile, { slug: candidate }, { fields: ['org'] }))) {
          slug = candidate;
          break;
        }
      }
    }
    const row = profile ?? em.create(Profile, { org: em.getReference(Org, orgId) });
    row.displayName ??= name;
    row.slug ??= slug;
    try {
      await em.flush();
      return;
    } catch (err) {
      // Another org took the slug between the look and the write (or this org's profile was made meanwhile): again.
      if (!(err instanceof UniqueConstraintViolationException)) throw err;
    }
  }
}
