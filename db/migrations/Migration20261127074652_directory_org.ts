import { Migration } from '@mikro-orm/migrations';

/**
 * The public directory's org is marked by a flag (issue 21 item 3), no longer found by the profile slug
 * `public-apis`, which any provider could take first. At most one org holds the flag (a partial unique index, added
 * by hand: the entity model cannot express it). An existing install flags the org the import created: the one that
 * owns `source = 'directory'` listings and has no people (the import's org never has users; a provider's always does).
 */
export class Migration20261127074652_directory_org extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "orgs" add column "directory" boolean not null default false;`);
    this.addSql(`create unique index "orgs_directory_uniq" on "orgs" ("directory") where "directory";`);
    this.addSql(
      `update "orgs" set "directory" = true
        where "id" = (select a."org_id" from "apis" a
                       where a."source" = 'directory'
                         and not exists (select 1 from "users" u where u."org_id" = a."org_id")
                       group by a."org_id" order by count(*) desc limit 1);`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "orgs_directory_uniq";`);
    this.addSql(`alter table "orgs" drop column "directory";`);
  }
}
