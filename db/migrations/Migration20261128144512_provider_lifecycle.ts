import { Migration } from '@mikro-orm/migrations';

/**
 * Providers change, version and retire their listings (issue 31): an archived status (`archived_at`), endpoint
 * removals announced with a sunset (`removal_announced_at`, `sunset_at`), the endpoints removed from an ever-live
 * listing kept in `removed_endpoints` (same ids), and a live listing's staged changes in `api_revisions` (at most one
 * open per listing).
 */
export class Migration20261128144512_provider_lifecycle extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "api_revisions" ("id" varchar(40) not null, "api_id" varchar(40) not null, "number" int not null, "status" text check ("status" in ('open', 'published', 'discarded')) not null default 'open', "changes" jsonb not null, "verification" jsonb null, "published_at" timestamptz null, "discarded_at" timestamptz null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "api_revisions_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "api_revisions" add constraint "api_revisions_api_number_uniq" unique ("api_id", "number");`,
    );
    this.addSql(`create unique index "api_revisions_one_open" on "api_revisions" ("api_id") where "status" = 'open';`);

    this.addSql(
      `create table "removed_endpoints" ("id" varchar(40) not null, "api_id" varchar(40) not null, "method" text check ("method" in ('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS')) not null, "path" varchar(500) not null, "summary" varchar(200) null, "operation_id" varchar(200) null, "input_schema" jsonb null, "output_schema" jsonb null, "price_cents" bigint not null, "removal_announced_at" timestamptz not null, "removed_at" timestamptz not null, "created_at" timestamptz not null, constraint "removed_endpoints_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "removed_endpoints_api_id_index" on "removed_endpoints" ("api_id");`);

    this.addSql(
      `alter table "api_revisions" add constraint "api_revisions_api_id_foreign" foreign key ("api_id") references "apis" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "removed_endpoints" add constraint "removed_endpoints_api_id_foreign" foreign key ("api_id") references "apis" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(`alter table "apis" drop constraint if exists "apis_status_check";`);

    this.addSql(`alter table "apis" add column "archived_at" timestamptz null;`);
    this.addSql(
      `alter table "apis" add constraint "apis_status_check" check("status" in ('draft', 'live', 'archived'));`,
    );
    this.addSql(
      `alter table "apis" add constraint apis_archived_pair check((status = 'archived') = (archived_at IS NOT NULL));`,
    );

    this.addSql(
      `alter table "endpoints" add column "removal_announced_at" timestamptz null, add column "sunset_at" timestamptz null;`,
    );
    this.addSql(
      `alter table "endpoints" add constraint endpoints_removal_pair check((removal_announced_at IS NULL) = (sunset_at IS NULL));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "api_revisions" cascade;`);

    this.addSql(`drop table if exists "removed_endpoints" cascade;`);

    this.addSql(`alter table "apis" drop constraint if exists "apis_status_check";`);

    this.addSql(`alter table "apis" drop constraint apis_archived_pair;`);
    this.addSql(`alter table "apis" drop column "archived_at";`);

    this.addSql(`alter table "apis" add constraint "apis_status_check" check("status" in ('draft', 'live'));`);

    this.addSql(`alter table "endpoints" drop constraint endpoints_removal_pair;`);
    this.addSql(`alter table "endpoints" drop column "removal_announced_at", drop column "sunset_at";`);
  }
}
