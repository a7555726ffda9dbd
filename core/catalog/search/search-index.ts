/**
 * Keeps api_search in step with listings: called when a listing is published or edited (providers.service), and by
 * the directory import. Builds the weighted full-text document and the semantic vector of each listing and upserts
 * them (and adds the document's lexemes to `search_lexicon`, which corrects unknown query words); a row whose inputs did not change is left untouched. Rows of drafts stay (search filters
 * on the listing's status), so publishing again is instant.
 *
 * Field weights (Postgres A > B > C > D): name, tags, category and examples A; summary and synonyms B; description and
 * endpoint summaries C (B or A measured the same on npm run eval:search); the words of endpoint paths D. Endpoint
 * summaries are also intents of the listing's vectors (after its examples): a provider's "Daily weather forecast for
 * a city" says what a call does as an example question would.
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
  /** Its endpoints' summaries and paths, in their order. */
  endpoint_summaries: string[] | null;
  endpoint_paths: string[] | null;
}

/** Tags that describe access (auth:apikey, https, cors:yes) help filters, not meaning. */
export const textTags = (tags: readonly string[]) => tags.filter((t) => !t.includes(':') && t !== 'https');

/** "OpenWeatherMap" also as "Open Weather Map", so either spelling matches. */
export function splitName(name: string): string {
  const split = name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/([A-Za-z])(\d)/g, '$1 $2');
  return split === name ? name : `${name} ${split}`;
}

/** The words of a path template: "/forecast/{city}/daily" → "forecast city daily". */
export const pathWords = (p: string) => p.replace(/[^A-Za-z0-9]+/g, ' ').trim();

/**
 * The document format: stored with the embedder's id (`<embedder id>#<format>`), so listings indexed by an older
 * format are indexed again at the next start (their vectors stay in use meanwhile when the embedder is the same).
 */
export const INDEX_FORMAT = 2;
export const indexMarker = (embedderId: string) => `${embedderId}#${INDEX_FORMAT}`;
/** Whether a stored vector was made by this embedder (whatever the document format). */
export const vectorUsable = (stored: string | null, embedderId: string) =>
  stored === embedderId || (stored?.startsWith(`${embedderId}#`) ?? false);

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
  const calls = [...new Set((r.endpoint_summaries ?? []).map((t) => t.trim()).filter(Boolean))];
  const endpointText = calls.join('. ').slice(0, 5000);
  return {
    id: r.id,
    a: [splitName(r.name), tags.join(' '), category, examples].filter(Boolean).join('. '),
    b: [r.summary, synonyms].filter(Boolean).join('. '),
    c: [(r.description ?? '').slice(0, 5000), endpointText].filter(Boolean).join('. '),
    d: (r.endpoint_paths ?? []).map(pathWords).join(' ').slice(0, 20_000),
    semantic: {
      main: `${splitName(r.name)}. ${r.summary}. ${(r.description ?? '').slice(0, 500)}`,
      category,
      intents: [examples, synonyms, endpointText.slice(0, 1000), tags.join(' ')].filter(Boolean).join('. '),
      // Each example, then each endpoint summary, on its own (searched by best match), so one precise intent is not
      // diluted by the others.
      each: [...r.examples, ...calls].slice(0, MAX_INTENT_VECTORS),
    },
  };
}

/** Vectors kept per listing besides the combined one. */
export const MAX_INTENT_VECTORS = 12;

/** Field mix of a listing's vector (measured with npm run eval:search, docs/decisions.md). */
const SEMANTIC_WEIGHTS = { main: 1, category: 0.35, intents: 1 } as const;

export class SearchIndex {
  constructor(private readonly deps: { orm: MikroORM; embedder: Embedder }) {}

  /** What a row indexed now stores in `api_search.embedder`: the embedder's id and the document format. */
  get marker(): string {
    return indexMarker(this.deps.embedder.id);
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
              (select array_agg(e.summary order by e.position, e.path) from endpoints e
                where e.api_id = a.id and e.summary is not null) as endpoint_summaries,
              (select array_agg(e.path order by e.position, e.path) from endpoints e
                where e.api_id = a.id) as endpoint_paths
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
      [this.marker, JSON.stringify(payload)],
    );
    return res.length;
  }

  /**
   * Listings whose index row is missing, from another embedder (after switching SEARCH_EMBEDDER) or from an older
   * document format.
   */
  async stale(): Promise<string[]> {
    const rows = await this.deps.orm.em.fork().execute<{ id: string }[]>(
      `select a.id from apis a left join api_search s on s.api_id = a.id
          where a.status = 'live' and (s.api_id is null or s.embedder is distinct from ?)`,
      [this.marker],
    );
    return rows.map((r) => r.id);
  }
}
