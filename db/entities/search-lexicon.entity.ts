/**
 * Every lexeme of the full-text search index (core/catalog/search/search-index.ts adds the lexemes of each row it writes).
 * A query word that is not here is corrected to its nearest words by `pg_trgm` similarity (core/catalog/search/search.service.ts).
 * Words of listings since removed may linger: a correction to one matches nothing, which costs nothing.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const SearchLexicon = defineEntity({
  name: 'SearchLexicon',
  tableName: 'search_lexicon',
  properties: {
    word: p.text().primary(),
  },
  indexes: [
    {
      name: 'search_lexicon_word_trgm_idx',
      expression: 'create index "search_lexicon_word_trgm_idx" on "search_lexicon" using gin ("word" gin_trgm_ops)',
    },
  ],
});

export type ISearchLexicon = InferEntity<typeof SearchLexicon>;
