import { Migration } from '@mikro-orm/migrations';

/**
 * Search at 100,000 listings (issue 33). Keyword matching and ranking moved into the per-process copy
 * (core/catalog/search/keyword-index.ts), so no query reads `api_search.document` through its GIN index any more:
 * the index is dropped (it cost every publish and import a GIN update). The copy's incremental sync asks for the
 * listings changed since its watermark, every 0.4 s in every process: `apis.updated_at` gets the index
 * `api_search.updated_at` already has, so that read is a range scan of the few recent rows, not a scan of the catalog.
 */
export class Migration20261129120000_search_copy_indexes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop index if exists "api_search_document_idx";`);
    this.addSql(`create index if not exists "apis_updated_at_idx" on "apis" ("updated_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "apis_updated_at_idx";`);
    this.addSql(`create index if not exists "api_search_document_idx" on "api_search" using gin ("document");`);
  }
}
