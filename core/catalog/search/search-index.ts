/**
 * Keeps api_search in step with listings: called when a listing is published or edited (providers.service), and by
 * the directory import. Builds the weighted full-text document and the semantic vector of each listing and upserts
 * them (and adds the document's lexemes to `search_lexicon`, which corrects unknown query words); a row whose inputs did not change is left untouched. Rows of drafts stay (search filters
 * on the listing's status), so publishing again is instant.
 *
 * Field weights (Postgres A > B > C > D): name, tags, category and examples A; summary and synonyms B; description and
 * endpoint summaries C (B or A measured the same on npm run eval:search); the words of endpoint paths D. Endpoint
 * summaries are also intents of the listing's vectors (after its examples): a provider's "Daily weather forecast for
 * a city" says what a call does as an example question would. A listing without examples gets a derived enrichment
 * learned from the enriched directory (issue 33; derived-enrichment.ts, derived-model.ts): intent words in field D and
 * its semantic intents, question clusters as intent vectors, and its main vector projected toward how people ask.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { DERIVE, shippedDerivation, type DerivationInput, type DerivationModel } from './derived-enrichment.js';
import { Deriver, type Derived } from './derived-model.js';
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
  /** The category's slug (what the derived enrichment is learned by). */
  category?: string | null;
  /** Its endpoints' summaries and paths, in their order. */
  endpoint_summaries: string[] | null;
  endpoint_paths: string[] | null;
  /** Its endpoints' operation ids, and their input parameters' names and descriptions (read by the derivation). */
  endpoint_ops?: string[] | null;
  endpoint_params?: string[] | null;
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
export const INDEX_FORMAT = 3;
export const indexMarker = (embedderId: string) => `${embedderId}#${INDEX_FORMAT}`;
/** Whether a stored vector was made by this embedder (whatever the document format). */
export const vectorUsable = (stored: string | null, embedderId: string) =>
  stored === embedderId || (stored?.startsWith(`${embedderId}#`) ?? false);

export interface IndexedDocument {
  id: string;
  /** Intent words derived for a listing without examples (derived-enrichment.ts), best first. */
  derived: string[];
  a: string;
  b: string;
  c: string;
  d: string;
  /** `project`: add the derivation's projection of the main vector (a listing without examples). */
  semantic: { main: string; category: string; intents: string; each: string[]; project?: boolean };
}

/** The texts of a listing that its intent words are derived from (derived-enrichment.ts). */
export function derivationInput(r: ListingRow): DerivationInput & { main: string; calls: boolean } {
  const calls = (r.endpoint_summaries ?? []).join('. ');
  const paths = (r.endpoint_paths ?? []).map(pathWords).join(' ');
  const operations = [...(r.endpoint_ops ?? []), ...(r.endpoint_params ?? [])].join('. ').slice(0, 5000);
  const tags = textTags(r.tags).join(' ');
  return {
    texts: [splitName(r.name), r.summary, r.description ?? '', r.category_name ?? '', tags, calls, paths, operations],
    category: r.category ?? null,
    main: mainText(r),
    calls: (r.endpoint_summaries ?? []).some((t) => t.trim()),
  };
}

const mainText = (r: ListingRow) => `${splitName(r.name)}. ${r.summary}. ${(r.description ?? '').slice(0, 500)}`;

/**
 * A listing's search document. `derived`: the intent words derived for a listing without examples
 * (derived-enrichment.ts), best first: they join field D and its semantic intents, and its vector gets the
 * derivation's projection; undefined for a listing with examples or without a derivation model.
 */
export function documentOf(r: ListingRow, derived?: Derived): IndexedDocument {
  const tags = textTags(r.tags);
  const category = r.category_name ?? '';
  const examples = r.examples.join('. ');
  const synonyms = r.search_terms.join(', ');
  const calls = [...new Set((r.endpoint_summaries ?? []).map((t) => t.trim()).filter(Boolean))];
  const endpointText = calls.join('. ').slice(0, 5000);
  const paths = (r.endpoint_paths ?? []).map(pathWords).join(' ').slice(0, 20_000);
  const derivedText = (derived?.words ?? []).join(' ');
  const derivedIntents = (derived?.words ?? []).slice(0, DERIVE.semanticWords).join(' ');
  const project = derived?.project ?? false;
  return {
    id: r.id,
    derived: [...(derived?.words ?? [])],
    a: [splitName(r.name), tags.join(' '), category, examples].filter(Boolean).join('. '),
    b: [r.summary, synonyms].filter(Boolean).join('. '),
    c: [(r.description ?? '').slice(0, 5000), endpointText].filter(Boolean).join('. '),
    d: [paths, derivedText].filter(Boolean).join(' '),
    semantic: {
      main: mainText(r),
      category,
      intents: [examples, synonyms, endpointText.slice(0, 1000), tags.join(' '), derivedIntents]
        .filter(Boolean)
        .join('. '),
      // Each example, then each endpoint summary, then each pseudo-intent, on its own (searched by best match), so
      // one precise intent is not diluted by the others; room is kept for the projected vector.
      each: [...r.examples, ...calls, ...(derived?.intents ?? [])].slice(0, MAX_INTENT_VECTORS - (project ? 1 : 0)),
      project,
    },
  };
}

/** Object members of a jsonb value (none when it is not an object). */
const members = (v: string) => `jsonb_each(case jsonb_typeof(${v}) when 'object' then ${v} else '{}'::jsonb end)`;

/** What the derivation also reads of a listing's endpoints: operation ids, parameter names and descriptions. */
const DERIVATION_COLUMNS = `(select array_agg(e.operation_id order by e.position, e.path) from endpoints e
                where e.api_id = a.id and e.operation_id is not null) as endpoint_ops,
              (select array_agg(distinct concat_ws(' ', p.key, left(p.value->>'description', 200)))
                 from endpoints e, ${members(`e.input_schema->'properties'`)} g, ${members(`g.value->'properties'`)} p
                where e.api_id = a.id) as endpoint_params`;

/** Vectors kept per listing besides the combined one. */
export const MAX_INTENT_VECTORS = 12;

/** Field mix of a listing's vector (measured with npm run eval:search, docs/decisions.md). */
const SEMANTIC_WEIGHTS = { main: 1, category: 0.35, intents: 1 } as const;

export class SearchIndex {
  private readonly deriver: Deriver | null;

  /**
   * `derivation`: the model deriving intent words for listings without examples; by default the shipped one
   * (derived-model.json), null for none.
   */
  constructor(private readonly deps: { orm: MikroORM; embedder: Embedder; derivation?: DerivationModel | null }) {
    const model = deps.derivation === undefined ? shippedDerivation() : deps.derivation;
    this.deriver = model ? new Deriver(model, deps.embedder) : null;
  }

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
    // A listing without examples: its main vector projected toward how people ask (derived-model.ts), one more intent.
    const projected =
      doc.semantic.project && parts[0] === 'main' ? (this.deriver?.projectMain(vecs[0]!) ?? null) : null;
    const out = new Float32Array(dims * (1 + each.length + (projected ? 1 : 0)));
    const combined = out.subarray(0, dims);
    parts.forEach((k, i) => {
      const v = vecs[i]!;
      for (let j = 0; j < dims; j++) combined[j]! += SEMANTIC_WEIGHTS[k] * v[j]!;
    });
    normalize(combined);
    each.forEach((_t, i) => out.set(vecs[parts.length + i]!, dims * (1 + i)));
    if (projected) out.set(projected, dims * (1 + each.length));
    return out;
  }

  /** (Re)index these listings; returns how many rows changed. */
  async index(apiIds: readonly string[]): Promise<number> {
    let changed = 0;
    for (let i = 0; i < apiIds.length; i += 500) changed += await this.indexBatch(apiIds.slice(i, i + 500));
    this.changed();
    return changed;
  }

  private readonly listeners = new Set<() => void>();

  /**
   * Be told of this process's writes to listings (search's copy, search-copy.ts, then refreshes before its next
   * answer: read-your-writes within a process; other processes see them within the copy's refresh interval).
   */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A listing changed in this process without being indexed again (a status flip). */
  changed(): void {
    for (const listener of this.listeners) listener();
  }

  private async indexBatch(ids: readonly string[]): Promise<number> {
    if (!ids.length) return 0;
    const em = this.deps.orm.em.fork();
    const rows = await em.execute<ListingRow[]>(
      `select a.id, a.name, a.summary, a.description, a.tags, a.examples, a.search_terms, a.category,
              c.name as category_name,
              (select array_agg(e.summary order by e.position, e.path) from endpoints e
                where e.api_id = a.id and e.summary is not null) as endpoint_summaries,
              (select array_agg(e.path order by e.position, e.path) from endpoints e
                where e.api_id = a.id) as endpoint_paths,
              ${DERIVATION_COLUMNS}
         from apis a left join categories c on c.slug = a.category
        where a.id in (select jsonb_array_elements_text(?::jsonb))`,
      [JSON.stringify(ids)],
    );
    const docs = [];
    for (const r of rows) {
      const derived = this.deriver && !r.examples.length ? await this.deriver.derive(derivationInput(r)) : undefined;
      docs.push(documentOf(r, derived));
    }
    const payload = [];
    for (const doc of docs) {
      const vec = await this.vectorOf(doc);
      payload.push({ ...doc, semantic: undefined, derived: undefined, emb: toBytes(vec).toString('hex') });
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
