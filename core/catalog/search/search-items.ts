/**
 * A search page's display fields (search.service.ts): read for the page's ids only, in their order, with each
 * listing's price range, category and provider, and its scores.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Scores } from './scores.js';
import type { SearchItem } from './search.schemas.js';

export type { SearchItem } from './search.schemas.js';

interface ItemRow {
  id: string;
  slug: string;
  name: string;
  summary: string;
  tags: string[];
  source: 'provider' | 'directory';
  docs_url: string | null;
  category: string | null;
  category_name: string | null;
  provider_slug: string | null;
  provider_name: string | null;
  min: string | null;
  max: string | null;
}

/** The display fields of the live listings among the ids given. */
const ITEMS_SQL = `select a.id, a.slug, a.name, a.summary, a.tags, a.source, a.docs_url, a.category, c.name as category_name,
            p.slug as provider_slug, p.display_name as provider_name, e.min, e.max
       from apis a
       left join categories c on c.slug = a.category
       left join profiles p on p.org_id = a.org_id
       left join lateral (select min(price_cents) as min, max(price_cents) as max from endpoints
                           where api_id = a.id) e on true
      where a.id in (select jsonb_array_elements_text(?::jsonb)) and a.status = 'live'`;

/** The page's items, in the order of `ids` (a listing unpublished since the copy was refreshed is left out). */
export async function readItems(
  em: EntityManager,
  ids: string[],
  scores: Map<string, Scores>,
  rel: ((id: string) => number) | null,
): Promise<SearchItem[]> {
  if (!ids.length) return [];
  const rows = await em.execute<ItemRow[]>(ITEMS_SQL, [JSON.stringify(ids)]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const out: SearchItem[] = [];
  for (const id of ids) {
    const r = byId.get(id);
    if (!r) continue; // unpublished since the copy was refreshed
    const s = scores.get(id)!;
    const min = r.min === null ? null : Number(r.min);
    out.push({
      slug: r.slug,
      name: r.name,
      summary: r.summary,
      category: r.category ? { slug: r.category, name: r.category_name ?? r.category } : null,
      tags: r.tags,
      source: r.source,
      callable: r.source === 'provider',
      docs_url: r.docs_url,
      price: {
        min_price_cents: min,
        max_price_cents: r.max === null ? null : Number(r.max),
        free: r.max !== null && Number(r.max) === 0,
      },
      svc_score: s.svc_score,
      merit: {
        reliability: s.reliability,
        latency: s.latency,
        usage: s.usage,
        value: s.value,
        freshness: s.freshness,
      },
      ...(rel ? { relevance: Math.round(Math.min(1, rel(id)) * 1e4) / 1e4 } : {}),
      provider: { slug: r.provider_slug, name: r.provider_name },
    });
  }
  return out;
}
