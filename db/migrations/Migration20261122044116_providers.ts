import { Migration } from '@mikro-orm/migrations';

export class Migration20261122044116_providers extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "apis" ("id" varchar(40) not null, "org_id" varchar(40) not null, "name" varchar(100) not null, "slug" varchar(64) not null, "summary" varchar(300) not null, "description" text null, "tags" text[] not null default '{}', "category" varchar(64) null, "base_url" varchar(2000) not null, "docs_url" varchar(2000) null, "import_source" jsonb null, "status" text check ("status" in ('draft', 'live')) not null default 'draft', "credential_ciphertext" text null, "injection" text check ("injection" in ('bearer', 'header', 'query', 'basic')) null, "injection_name" varchar(100) null, "credential_updated_at" timestamptz null, "verification_status" text check ("verification_status" in ('never', 'passed', 'failed')) not null default 'never', "verification" jsonb null, "published_at" timestamptz null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "apis_pkey" primary key ("id"), constraint apis_slug_format check (slug ~ '^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?\$'), constraint apis_injection_name check (injection IS NULL OR injection = 'bearer' OR injection = 'basic' OR injection_name IS NOT NULL));`,
    );
    this.addSql(`create index "apis_org_id_index" on "apis" ("org_id");`);
    this.addSql(`alter table "apis" add constraint "apis_slug_unique" unique ("slug");`);

    this.addSql(
      `create table "endpoints" ("id" varchar(40) not null, "api_id" varchar(40) not null, "method" text check ("method" in ('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS')) not null, "path" varchar(500) not null, "summary" varchar(200) null, "operation_id" varchar(200) null, "input_schema" jsonb null, "output_schema" jsonb null, "price_cents" bigint not null default 0, "pending_price_cents" bigint null, "pending_price_effective_at" timestamptz null, "discount" jsonb null, "position" int not null default 0, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "endpoints_pkey" primary key ("id"), constraint endpoints_price_nonnegative check (price_cents >= 0 AND (pending_price_cents IS NULL OR pending_price_cents >= 0)), constraint endpoints_pending_pair check ((pending_price_cents IS NULL) = (pending_price_effective_at IS NULL)));`,
    );
    this.addSql(
      `alter table "endpoints" add constraint "endpoints_api_method_path_uniq" unique ("api_id", "method", "path");`,
    );

    this.addSql(
      `create table "documents" ("id" varchar(40) not null, "org_id" varchar(40) not null, "api_id" varchar(40) null, "kind" text check ("kind" in ('terms', 'privacy', 'acceptable_use', 'sla', 'dpa', 'other')) not null, "source" text check ("source" in ('hosted')) not null default 'hosted', "version" varchar(50) not null, "title" varchar(200) null, "body" text not null, "content_hash" varchar(64) not null, "acceptance_mode" text check ("acceptance_mode" in ('required', 'optional')) not null default 'optional', "status" text check ("status" in ('draft', 'active', 'superseded')) not null default 'draft', "activated_at" timestamptz null, "superseded_at" timestamptz null, "created_at" timestamptz not null default now(), constraint "documents_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "documents_org_id_index" on "documents" ("org_id");`);
    this.addSql(`create index "documents_api_id_index" on "documents" ("api_id");`);
    this.addSql(`create index "documents_scope_idx" on "documents" ("org_id", "api_id", "kind", "status");`);

    this.addSql(
      `create table "terms_acceptances" ("id" varchar(40) not null, "org_id" varchar(40) not null, "document_id" varchar(40) not null, "content_hash" varchar(64) not null, "accepted_by_id" varchar(40) not null, "accepted_at" timestamptz not null default now(), constraint "terms_acceptances_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "terms_acceptances_document_id_index" on "terms_acceptances" ("document_id");`);
    this.addSql(
      `alter table "terms_acceptances" add constraint "terms_acceptances_org_document_uniq" unique ("org_id", "document_id");`,
    );

    this.addSql(
      `alter table "apis" add constraint "apis_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "endpoints" add constraint "endpoints_api_id_foreign" foreign key ("api_id") references "apis" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "documents" add constraint "documents_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade;`,
    );
    this.addSql(
      `alter table "documents" add constraint "documents_api_id_foreign" foreign key ("api_id") references "apis" ("id") on update cascade on delete set null;`,
    );

    this.addSql(
      `alter table "terms_acceptances" add constraint "terms_acceptances_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade;`,
    );
    this.addSql(
      `alter table "terms_acceptances" add constraint "terms_acceptances_document_id_foreign" foreign key ("document_id") references "documents" ("id") on update cascade;`,
    );
    this.addSql(
      `alter table "terms_acceptances" add constraint "terms_acceptances_accepted_by_id_foreign" foreign key ("accepted_by_id") references "users" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "orgs" add column "stripe_account_id" varchar(64) null, add column "connect_status" text check ("connect_status" in ('none', 'pending', 'enabled')) not null default 'none';`,
    );
    this.addSql(`alter table "orgs" add constraint "orgs_stripe_account_id_unique" unique ("stripe_account_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "endpoints" drop constraint "endpoints_api_id_foreign";`);

    this.addSql(`alter table "documents" drop constraint "documents_api_id_foreign";`);

    this.addSql(`alter table "terms_acceptances" drop constraint "terms_acceptances_document_id_foreign";`);

    this.addSql(`drop table if exists "apis" cascade;`);

    this.addSql(`drop table if exists "endpoints" cascade;`);

    this.addSql(`drop table if exists "documents" cascade;`);

    this.addSql(`drop table if exists "terms_acceptances" cascade;`);

    this.addSql(`alter table "orgs" drop constraint "orgs_stripe_account_id_unique";`);
    this.addSql(`alter table "orgs" drop column "stripe_account_id", drop column "connect_status";`);
  }
}
