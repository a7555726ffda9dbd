/**
 * The search index row of a listing (core/catalog/search/search-index.ts): derived from the listing and its endpoints when
 * it is published, edited or imported, never edited by hand. `document` is the weighted full-text document (name,
 * tags, category and examples A; summary and synonyms B; description and endpoint summaries C; the words of endpoint
 * paths D), `embedding` the semantic vectors (Float32, little endian); `embedder` is the embedder's id and the
 * document format (`<id>#<format>`, core/catalog/search/search-index.ts indexMarker).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { dbNow } from './common.js';
import { FullTextType } from '@mikro-orm/postgresql';
import { Api } from './api.entity.js';

export const ApiSearch = defineEntity({
  name: 'ApiSearch',
  tableName: 'api_search',
  properties: {
    api: p.oneToOne(Api).primary().deleteRule('cascade').fieldName('api_id'),
    document: p.type(FullTextType),
    embedding: p.blob(),
    embedder: p.string().length(100),
    // The per-process copy's incremental sync (core/catalog/search/search-copy.ts). No index on `document`: keyword
    // matching runs in the copy (keyword-index.ts).
    updatedAt: dbNow().index('api_search_updated_at_idx'),
  },
});

export type IApiSearch = InferEntity<typeof ApiSearch>;
