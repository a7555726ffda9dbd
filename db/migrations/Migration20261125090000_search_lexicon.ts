import { Migration } from '@mikro-orm/migrations';

/**
 * Search lexicon (issue 11): every lexeme of the full-text index, with a trigram index, so a query word the index
 * does not know (a typo, a partial word) is corrected to its nearest indexed words by `pg_trgm` similarity and
 * searched with full-text search. Replaces the trigram index on each listing's title, which the planner scanned
 * sequentially (70 ms at 10k listings). Filled from the existing index rows; kept up by core/catalog/search-index.ts.
 */
export class Migration20261125090000_search_lexicon extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "search_lexicon" ("word" text not null, constraint "search_lexicon_pkey" primary key ("word"));`,
    );
    this.addSql(`create index "search_lexicon_word_trgm_idx" on "search_lexicon" using gin ("word" gin_trgm_ops);`);
    this.addSql(
      `insert into "search_lexicon" ("word") select distinct w from "api_search", unnest(tsvector_to_array("document")) w on conflict do nothing;`,
    );
    this.addSql(`drop index if exists "api_search_title_trgm_idx";`);
    this.addSql(`alter table "api_search" drop column "title";`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "api_search" add column "title" text not null default '';`);
    this.addSql(`create index "api_search_title_trgm_idx" on "api_search" using gin ("title" gin_trgm_ops);`);
    this.addSql(`drop table if exists "search_lexicon" cascade;`);
  }
}
