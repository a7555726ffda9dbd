import { Migration } from '@mikro-orm/migrations';

export class Migration20261122055037_gateway extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "key_day_spend" ("key_id" varchar(40) not null, "day" varchar(10) not null, "spent_cents" bigint not null default 0, constraint "key_day_spend_pkey" primary key ("key_id", "day"), constraint key_day_spend_nonnegative check (spent_cents >= 0));`,
    );

    this.addSql(
      `alter table "key_day_spend" add constraint "key_day_spend_key_id_foreign" foreign key ("key_id") references "api_keys" ("id") on update cascade;`,
    );

    this.addSql(`alter table "orgs" add column "balance_version" bigint not null default 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "key_day_spend" cascade;`);

    this.addSql(`alter table "orgs" drop column "balance_version";`);
  }
}
