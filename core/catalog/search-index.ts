/**
 * Keeps api_search in step with listings: called when a listing is published or edited (providers.service), and by
 * the directory import. Builds the weighted full-text document and the semantic vector of each listing and upserts
 * them (and adds the document's lexemes to `search_lexicon`, which corrects unknown query words); a row whose inputs did not change is left untouched. Rows of drafts stay (search filters
 * on the listing's status), so publishing again is instant.
 *
 * Field weights (Postgres A > B > C > D): name, tags, category and examples A; summary and synonyms B; description C;
 * endpoint paths and summaries D.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { normalize, toBytes, type Embedder } from './embedder.js';

interface ListingRow {
  id: string;
  name: string;
  summary: string;
  description: string | null;
  tags: string[];
  examples: string[];
  search_terms: string[];
  category_name: string | null;
  endpoints: string | null;
}

/** Tags that describe access (auth:apikey, https, cors:yes) help filters, not meaning. */
export const textTags = (tags: readonly string[]) => tags.filter((t) => !t.includes(':') && t !== 'https');

/** "OpenWeatherMap" also as "Open Weather Map", so either spelling matches. */
export function splitName(name: string): string {
  const split = name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/([A-Za-z])(\d)/g, '$1 $2');
  return split === name ? name : `${name} ${split}`;
}

export interface IndexedDocument {
  id: string;
  a: string;
  b: string;
  c: string;
  d: string;
  semantic: { main: string; category: string; intents: string; each: string[] };
}

export function documentOf(r: ListingRow): IndexedDocument {
  const tags = textTags(r.tags);
  const category = r.category_name ?? '';
  const examples = r.examples.join('. ');
  const synonyms = r.search_terms.join(', ');
  return {
    id: r.id,
    a: [splitName(r.name), tags.join(' '), category, examples].filter(Boolean).join('. '),
    b: [r.summary, synonyms].filter(Boolean).join('. '),
    c: (r.description ?? '').slice(0, 5000),
    d: (r.endpoints ?? '').slice(0, 20_000),
    semantic: {
      main: `${splitName(r.name)}. ${r.summary}. ${(r.description ?? '').slice(0, 500)}`,
      category,
      intents: [examples, synonyms, tags.join(' ')].filter(Boolean).join('. '),
      // Each example on its own (searched by best match), so one precise intent is not diluted by the others.
      each: r.examples.slice(0, MAX_INTENT_VECTORS),
    },
  };
}

/** Vectors kept per listing besides the combined one. */
export const MAX_INTENT_VECTORS = 12;

/** Field mix of a listing's vector (measured with npm run eval:search, docs/decisions.md). */
const SEMANTIC_WEIGHTS = { main: 1, category: 0.35, intents: 1 } as const;

export class SearchIndex {
  constructor(private readonly deps: { orm: MikroORM; embedder: Embedder }) {}

  get embedderId(): string {
    return this.deps.embedder.id;
  }

  /**
   * A listing's vectors, concatenated: first the combined one (a weighted sum of its fields' unit vectors,
   * normalised), then one per example question (at most MAX_INTENT_VECTORS).
   */
  async vectorOf(doc: IndexedDocument): Promise<Float32Array> {
    const { embedder } = this.deps;
    const parts = (['main', 'category', 'intents'] as const).filter((k) => doc.semantic[k].trim());
    const each = doc.semantic.each.filter((t) => t.trim());
    const vecs = await embedder.embed([...parts.map((k) => doc.semantic[k]), ...each]);
    const dims = embedder.dims;
    const out = new Float32Array(dims * (1 + each.length));
    const combined = out.subarray(0, dims);
    parts.forEach((k, i) => {
      const v = vecs[i]!;
      for (let j = 0; j < dims; j++) combined[j]! += SEMANTIC_WEIGHTS[k] * v[j]!;
    });
    normalize(combined);
    each.forEach((_t, i) => out.set(vecs[parts.length + i]!, dims * (1 + i)));
    return out;
  }

  /** (Re)index these listings; returns how many rows changed. */
  async index(apiIds: readonly string[]): Promise<number> {
    let changed = 0;
    for (let i = 0; i < apiIds.length; i += 500) changed += await this.indexBatch(apiIds.slice(i, i + 500));
    return changed;
  }

  private async indexBatch(ids: readonly string[]): Promise<number> {
    if (!ids.length) return 0;
    const em = this.deps.orm.em.fork();
    const rows = await em.execute<ListingRow[]>(
      `select a.id, a.name, a.summary, a.description, a.tags, a.examples, a.search_terms, c.name as category_name,
              (select string_agg(e.path || ' ' || coalesce(e.summary, ''), '. ' order by e.position)
                 from endpoints e where e.api_id = a.id) as endpoints
         from apis a left join categories c on c.slug = a.category
        where a.id in (select jsonb_array_elements_text(?::jsonb))`,
      [JSON.stringify(ids)],
    );
    const docs = rows.map(documentOf);
    const payload = [];
    for (const doc of docs) {
      const vec = await this.vectorOf(doc);
      payload.push({ ...doc, semantic: undefined, emb: toBytes(vec).toString('hex') });
    }
    const res = await em.execute<{ api_id: string }[]>(
      `with up as (
         insert into api_search (api_id, document, embedding, embedder, updated_at)
         select t.id,
                setweight(to_tsvector('english', t.a), 'A') || setweight(to_tsvector('english', t.b), 'B') ||
                setweight(to_tsvector('english', t.c), 'C') || setweight(to_tsvector('english', t.d), 'D'),
                decode(t.emb, 'hex'), ?, now()
           from jsonb_to_recordset(?::jsonb) as t(id text, a text, b text, c text, d text, emb text)
         on conflict (api_id) do update
            set document = excluded.document, embedding = excluded.embedding,
                embedder = excluded.embedder, updated_at = now()
          where api_search.document is distinct from excluded.document
             or api_search.embedding is distinct from excluded.embedding or api_search.embedder is distinct from excluded.embedder
         returning api_id, document),
       lexicon as (
         insert into search_lexicon (word)
         select distinct w from up, unnest(tsvector_to_array(up.document)) w
         on conflict do nothing)
       select api_id from up`,
      [this.deps.embedder.id, JSON.stringify(payload)],
    );
    return res.length;
  }

  /** Listings whose stored vector is missing or from another embedder (after switching SEARCH_EMBEDDER). */
  async stale(): Promise<string[]> {
    const rows = await this.deps.orm.em.fork().execute<{ id: string }[]>(
      `select a.id from apis a left join api_search s on s.api_id = a.id
          where a.status = 'live' and (s.api_id is null or s.embedder <> ?)`,
      [this.deps.embedder.id],
    );
    return rows.map((r) => r.id);
  }
}
