import { Migration } from '@mikro-orm/migrations';

/**
 * Gateway v4 (issue 32): usage_events keeps its org and key columns but no foreign keys to orgs and api_keys.
 * Each foreign key is a referential-integrity trigger per inserted row (a lookup of the org and of the key, each taking
 * a FOR KEY SHARE row lock on the same org row the usage commit then updates); measured at about 10 µs of Postgres CPU
 * per usage row, a third of what a row costs. The gateway only records calls of keys it authenticated, orgs and keys
 * are never deleted (a key is revoked, an org suspended), and their ids never change (docs/decisions.md, "Gateway v4:
 * the write path").
 */
export class Migration20261128183000_usage_events_no_foreign_keys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "usage_events" drop constraint if exists "usage_events_org_id_foreign";`);
    this.addSql(`alter table "usage_events" drop constraint if exists "usage_events_key_id_foreign";`);
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "usage_events" add constraint "usage_events_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade;`,
    );
    this.addSql(
      `alter table "usage_events" add constraint "usage_events_key_id_foreign" foreign key ("key_id") references "api_keys" ("id") on update cascade;`,
    );
  }
}
