import { Migration } from '@mikro-orm/migrations';

/**
 * Public reads are cheap (issue 10): the provider profile's 30-day stats and provider analytics read the usage
 * events of one org's APIs over a time range. Without this index each request scanned all of usage_events.
 */
export class Migration20261123100100_public_read_indexes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "usage_events_api_created_idx" on "usage_events" ("api_id", "created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "usage_events_api_created_idx";`);
  }
}
