import { Migration } from '@mikro-orm/migrations';

export class Migration20261122035042_accounts extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "login_codes" ("id" varchar(40) not null, "email" varchar(320) not null, "code_hash" varchar(64) not null, "attempts" int not null default 0, "created_at" timestamptz not null default now(), "expires_at" timestamptz not null, "consumed_at" timestamptz null, constraint "login_codes_pkey" primary key ("id"), constraint login_codes_attempts_nonnegative check (attempts >= 0));`,
    );
    this.addSql(`create index "login_codes_email_created_idx" on "login_codes" ("email", "created_at");`);

    this.addSql(
      `create table "avatars" ("id" varchar(40) not null, "org_id" varchar(40) not null, "content_type" text check ("content_type" in ('image/png', 'image/jpeg', 'image/webp')) not null, "bytes" bytea not null, "size_bytes" int not null, "sha256" varchar(64) not null, "created_at" timestamptz not null default now(), constraint "avatars_pkey" primary key ("id"), constraint avatars_size_limit check (size_bytes > 0 AND size_bytes <= 2097152));`,
    );
    this.addSql(`create index "avatars_org_id_index" on "avatars" ("org_id");`);

    this.addSql(
      `create table "profiles" ("org_id" varchar(40) not null, "display_name" varchar(80) null, "slug" varchar(40) null, "bio" text null, "website" varchar(200) null, "avatar_id" varchar(40) null, "contact_email" varchar(320) null, "contact_phone" varchar(32) null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "profiles_pkey" primary key ("org_id"), constraint profiles_slug_format check (slug IS NULL OR slug ~ '^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?\$'));`,
    );
    this.addSql(`alter table "profiles" add constraint "profiles_slug_unique" unique ("slug");`);

    this.addSql(
      `create table "usage_events" ("id" varchar(40) not null, "org_id" varchar(40) not null, "key_id" varchar(40) not null, "api_slug" varchar(64) not null, "api_id" varchar(40) null, "endpoint_id" varchar(40) null, "method" varchar(10) not null, "path" varchar(2000) not null, "status" smallint not null, "outcome" text check ("outcome" in ('success', 'failed')) not null, "cost_cents" bigint not null default 0, "price_cents_effective" bigint not null default 0, "credit_applied_cents" bigint not null default 0, "billable_cents" bigint not null default 0, "latency_ms" int not null, "idempotency_key" varchar(200) null, "request_id" varchar(128) not null, "created_at" timestamptz not null default now(), constraint "usage_events_pkey" primary key ("id"), constraint usage_events_money_nonnegative check (cost_cents >= 0 AND price_cents_effective >= 0 AND credit_applied_cents >= 0 AND billable_cents >= 0));`,
    );
    this.addSql(`create index "usage_events_org_created_idx" on "usage_events" ("org_id", "created_at");`);
    this.addSql(`create index "usage_events_key_created_idx" on "usage_events" ("key_id", "created_at");`);

    this.addSql(
      `create table "sessions" ("id" varchar(40) not null, "token_hash" varchar(64) not null, "user_id" varchar(40) not null, "org_id" varchar(40) not null, "created_at" timestamptz not null default now(), "last_seen_at" timestamptz not null default now(), "expires_at" timestamptz not null, "revoked_at" timestamptz null, "ip" varchar(64) null, "user_agent" varchar(300) null, constraint "sessions_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "sessions" add constraint "sessions_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "sessions_user_id_index" on "sessions" ("user_id");`);

    this.addSql(
      `create table "email_verifications" ("id" varchar(40) not null, "token_hash" varchar(64) not null, "user_id" varchar(40) not null, "created_at" timestamptz not null default now(), "expires_at" timestamptz not null, "used_at" timestamptz null, constraint "email_verifications_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "email_verifications" add constraint "email_verifications_token_hash_unique" unique ("token_hash");`,
    );
    this.addSql(`create index "email_verifications_user_id_index" on "email_verifications" ("user_id");`);

    this.addSql(
      `alter table "avatars" add constraint "avatars_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "profiles" add constraint "profiles_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "profiles" add constraint "profiles_avatar_id_foreign" foreign key ("avatar_id") references "avatars" ("id") on update cascade on delete set null;`,
    );

    this.addSql(
      `alter table "usage_events" add constraint "usage_events_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade;`,
    );
    this.addSql(
      `alter table "usage_events" add constraint "usage_events_key_id_foreign" foreign key ("key_id") references "api_keys" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "sessions" add constraint "sessions_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade;`,
    );
    this.addSql(
      `alter table "sessions" add constraint "sessions_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "email_verifications" add constraint "email_verifications_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade;`,
    );

    this.addSql(`alter table "orgs" add column "withheld_credit_cents" bigint not null default 0;`);
    this.addSql(
      `alter table "orgs" add constraint orgs_withheld_credit_nonnegative check(withheld_credit_cents >= 0);`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "profiles" drop constraint "profiles_avatar_id_foreign";`);

    this.addSql(`drop table if exists "login_codes" cascade;`);

    this.addSql(`drop table if exists "avatars" cascade;`);

    this.addSql(`drop table if exists "profiles" cascade;`);

    this.addSql(`drop table if exists "usage_events" cascade;`);

    this.addSql(`drop table if exists "sessions" cascade;`);

    this.addSql(`drop table if exists "email_verifications" cascade;`);

    this.addSql(`alter table "orgs" drop constraint orgs_withheld_credit_nonnegative;`);
    this.addSql(`alter table "orgs" drop column "withheld_credit_cents";`);
  }
}
