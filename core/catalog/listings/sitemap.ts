/**
 * What the storefront's `/sitemap.xml` lists (issue 31): every live listing (a provider's, and a directory entry,
 * whose page says where it can be called) and every provider with a public profile (a slug) and at least one live
 * listing. Drafts, unpublished and archived listings, and profiles with nothing live, are left out.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { toDate } from '../../db/sql.js';

export interface SitemapEntries {
  listings: { slug: string; updated_at: string }[];
  providers: { slug: string; updated_at: string }[];
}

export async function sitemapEntries(em: EntityManager): Promise<SitemapEntries> {
  const [listings, providers] = await Promise.all([
    em.execute<{ slug: string; updated_at: Date | string }[]>(
      `select slug, updated_at from apis where status = 'live' order by slug`,
    ),
    em.execute<{ slug: string; updated_at: Date | string }[]>(
      `select p.slug, max(a.updated_at) as updated_at
         from profiles p join apis a on a.org_id = p.org_id and a.status = 'live'
        where p.slug is not null group by p.slug order by p.slug`,
    ),
  ]);
  const out = (r: { slug: string; updated_at: Date | string }) => ({
    slug: r.slug,
    updated_at: toDate(r.updated_at).toISOString(),
  });
  return { listings: listings.map(out), providers: providers.map(out) };
}
