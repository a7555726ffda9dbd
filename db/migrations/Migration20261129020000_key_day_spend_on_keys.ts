import { Migration } from '@mikro-orm/migrations';

/**
 * Gateway v4 (issue 32, flat at scale): a key's spend on its latest UTC day moves from its own table (`key_day_spend`,
 * one row per key and day) onto the key's row (`spent_day`, `day_spent_cents`). The usage commit updated two rows per
 * key and batch, the key's and its day's; with a thousand keys in use each batch touches each key about once, so that
 * was two row versions per paid call. Only the latest day's spend is ever read (the daily cap, `spent_today_cents`),
 * so the older days' rows carry nothing anyone reads (usage_events keeps every call). The latest day of each key is
 * carried over.
 */
export class Migration20261129020000_key_day_spend_on_keys extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "api_keys" add column "spent_day" varchar(10) null, add column "day_spent_cents" bigint not null default 0;`,
    );
    this.addSql(
      `update "api_keys" k set "spent_day" = d.day, "day_spent_cents" = d.spent_cents
         from (select distinct on (key_id) key_id, day, spent_cents from "key_day_spend" order by key_id, day desc) d
        where k.id = d.key_id;`,
    );
    this.addSql(`alter table "api_keys" add constraint api_keys_day_spent_nonnegative check (day_spent_cents >= 0);`);
    this.addSql(`drop table if exists "key_day_spend" cascade;`);
    // Room on each page for the row's next version: a key's row changes with every batch its calls are in, and an
    // update that finds no room on its page is not HOT (it writes every index of the table: 9% of them at scale).
    this.addSql(`alter table "api_keys" set (fillfactor = 80);`);
  }

  override async down(): Promise<void> {
    this.addSql(
      `create table "key_day_spend" ("key_id" varchar(40) not null, "day" varchar(10) not null, "spent_cents" bigint not null default 0, constraint "key_day_spend_pkey" primary key ("key_id", "day"), constraint key_day_spend_nonnegative check (spent_cents >= 0));`,
    );
    this.addSql(
      `alter table "key_day_spend" add constraint "key_day_spend_key_id_foreign" foreign key ("key_id") references "api_keys" ("id") on update cascade;`,
    );
    this.addSql(
      `insert into "key_day_spend" (key_id, day, spent_cents) select id, spent_day, day_spent_cents from "api_keys" where spent_day is not null;`,
    );
    this.addSql(`alter table "api_keys" reset (fillfactor);`);
    this.addSql(`alter table "api_keys" drop constraint if exists api_keys_day_spent_nonnegative;`);
    this.addSql(`alter table "api_keys" drop column "spent_day", drop column "day_spent_cents";`);
  }
}
