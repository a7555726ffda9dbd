import { Migration } from '@mikro-orm/migrations';

/**
 * Catalog search (issue 11): `pg_trgm` (trusted since Postgres 13, so the database owner may create it; PGlite loads
 * it from its contrib build in db/embedded.ts), one search row per indexed listing (weighted full-text document,
 * trigram title, semantic vector) and the directory enrichment's synonyms on the listing.
 */
export class Migration20261123120000_search extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create extension if not exists pg_trgm;`);
    this.addSql(
      `create table "api_search" ("api_id" varchar(40) not null, "document" tsvector not null, "title" text not null, "embedding" bytea not null, "embedder" varchar(100) not null, "updated_at" timestamptz not null default now(), constraint "api_search_pkey" primary key ("api_id"));`,
    );
    this.addSql(`create index "api_search_document_idx" on "api_search" using gin ("document");`);
    this.addSql(`create index "api_search_updated_at_idx" on "api_search" ("updated_at");`);
    this.addSql(`create index "api_search_title_trgm_idx" on "api_search" using gin ("title" gin_trgm_ops);`);
    this.addSql(
      `alter table "api_search" add constraint "api_search_api_id_foreign" foreign key ("api_id") references "apis" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`alter table "apis" add column "search_terms" text[] not null default '{}';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "api_search" cascade;`);
    this.addSql(`alter table "apis" drop column "search_terms";`);
  }
}
