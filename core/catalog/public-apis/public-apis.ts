/**
 * The public directory format (data/public-apis/public-apis.json: name, url, description, category, auth, https,
 * cors) and the pure rules that turn an entry into a listing: its slug, category slug and tags. Pure, so the import,
 * the relevance set and the benchmark agree on slugs.
 */
import { z } from 'zod';

export const DirectoryEntry = z.object({
  name: z.string().trim().min(1).max(200),
  url: z.string().trim().min(1).max(2000),
  description: z.string().trim().max(2000).default(''),
  category: z.string().trim().min(1).max(100),
  auth: z.string().nullable().optional(),
  https: z.boolean().nullable().optional(),
  cors: z.string().nullable().optional(),
});
export type DirectoryEntry = z.infer<typeof DirectoryEntry>;
export const DirectoryFile = z.array(DirectoryEntry).max(100_000);

/** Enrichment files: `{ "<name>|<url>|<category>": { intents, synonyms } }` (also `<name>|<url>`); unknown keys ignored. */
export const EnrichmentEntry = z
  .object({
    intents: z.array(z.string().trim().min(1).max(300)).max(50).optional(),
    synonyms: z.array(z.string().trim().min(1).max(100)).max(100).optional(),
  })
  .passthrough();
export type EnrichmentEntry = z.infer<typeof EnrichmentEntry>;

/** The taxonomy's slug rule (as the catalog migration seeded it): lower-case, `&` → `and`, other runs → `-`. */
export function slugify(text: string, max = 64): string {
  const s = text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/&/g, 'and')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return s.slice(0, max).replace(/-+$/g, '');
}

export function categorySlug(category: string): string {
  return slugify(category);
}

export function entryKey(e: Pick<DirectoryEntry, 'name' | 'url' | 'category'>): string {
  return `${e.name}|${e.url}|${e.category}`;
}

/**
 * One unique slug per entry, deterministic for a given file: the name's slug; names that collide take their
 * category's slug as a suffix; entries that still collide (same name in the same category) get -2, -3 in file order.
 */
export function directorySlugs(entries: readonly DirectoryEntry[]): string[] {
  const base = entries.map((e) => slugify(e.name) || 'api');
  const count = new Map<string, number>();
  for (const b of base) count.set(b, (count.get(b) ?? 0) + 1);
  const taken = new Set<string>();
  return entries.map((e, i) => {
    let slug = base[i]!;
    if (count.get(slug)! > 1) slug = slugify(`${slug}-${categorySlug(e.category)}`);
    let candidate = slug;
    for (let n = 2; taken.has(candidate); n++) candidate = `${slug.slice(0, 60).replace(/-+$/, '')}-${n}`;
    taken.add(candidate);
    return candidate;
  });
}

/** `auth:apikey` / `auth:oauth` / `auth:none`, `https`, `cors:yes|no|unknown`. */
export function directoryTags(e: DirectoryEntry): string[] {
  const auth = e.auth ? slugify(e.auth).replace(/-/g, '') : 'none';
  const tags = [`auth:${auth || 'none'}`];
  if (e.https) tags.push('https');
  if (e.cors) tags.push(`cors:${slugify(e.cors) || 'unknown'}`);
  return tags;
}
