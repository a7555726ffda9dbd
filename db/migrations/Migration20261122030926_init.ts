import { Migration } from '@mikro-orm/migrations';

export class Migration20261122030926_init extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "orgs" ("id" varchar(40) not null, "kind" text check ("kind" in ('ephemeral', 'standard')) not null default 'ephemeral', "name" text null, "billing_mode" text check ("billing_mode" in ('prepaid', 'card')) not null default 'prepaid', "credit_cents" bigint not null default 0, "suspended" boolean not null default false, "suspended_reason" text null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "orgs_pkey" primary key ("id"), constraint orgs_prepaid_credit_nonnegative check (billing_mode <> 'prepaid' OR credit_cents >= 0));`,
    );

    this.addSql(
      `create table "ledger_entries" ("id" varchar(40) not null, "org_id" varchar(40) not null, "kind" text check ("kind" in ('grant', 'purchase', 'auto_reload', 'usage', 'refund', 'adjustment', 'provider_earning', 'platform_fee', 'payout', 'chargeback')) not null, "amount_cents" bigint not null, "balance_after_cents" bigint not null, "idempotency_key" varchar(200) null, "reference" varchar(200) null, "memo" text null, "created_at" timestamptz not null default now(), constraint "ledger_entries_pkey" primary key ("id"), constraint ledger_entries_amount_nonzero check (amount_cents <> 0));`,
    );
    this.addSql(`create index "ledger_entries_org_created_idx" on "ledger_entries" ("org_id", "created_at");`);
    this.addSql(
      `alter table "ledger_entries" add constraint "ledger_entries_org_idempotency_key_uniq" unique ("org_id", "idempotency_key");`,
    );

    this.addSql(
      `create table "api_keys" ("id" varchar(40) not null, "org_id" varchar(40) not null, "name" text not null, "key_hash" varchar(64) not null, "key_prefix" varchar(32) not null, "scopes" text[] not null, "source" text check ("source" in ('register', 'signup', 'api', 'oauth')) not null default 'api', "budget_cents" bigint null, "per_call_max_cents" bigint null, "daily_cap_cents" bigint null, "approval_mode" boolean not null default false, "spent_cents" bigint not null default 0, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "last_used_at" timestamptz null, "revoked_at" timestamptz null, constraint "api_keys_pkey" primary key ("id"), constraint api_keys_caps_nonnegative check ((budget_cents IS NULL OR budget_cents >= 0) AND (per_call_max_cents IS NULL OR per_call_max_cents >= 0) AND (daily_cap_cents IS NULL OR daily_cap_cents >= 0) AND spent_cents >= 0));`,
    );
    this.addSql(`create index "api_keys_org_id_index" on "api_keys" ("org_id");`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash");`);
    this.addSql(`create index "api_keys_key_prefix_index" on "api_keys" ("key_prefix");`);

    this.addSql(
      `create table "users" ("id" varchar(40) not null, "org_id" varchar(40) not null, "email" varchar(320) not null, "name" text null, "role" text check ("role" in ('owner', 'admin', 'member')) not null default 'owner', "email_verified_at" timestamptz null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "users_pkey" primary key ("id"), constraint users_email_lowercase check (email = lower(email)));`,
    );
    this.addSql(`create index "users_org_id_index" on "users" ("org_id");`);
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);

    this.addSql(
      `alter table "ledger_entries" add constraint "ledger_entries_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "api_keys" add constraint "api_keys_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "users" add constraint "users_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade;`,
    );
    // Append-only ledger: rows are facts. Corrections are new rows (refund, adjustment), never edits.
    this.addSql(`create function ledger_entries_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'ledger_entries is append-only: % is not allowed', tg_op using errcode = 'restrict_violation';
end $$;`);
    this.addSql(
      `create trigger ledger_entries_no_update before update or delete on "ledger_entries" for each row execute function ledger_entries_append_only();`,
    );
    this.addSql(
      `create trigger ledger_entries_no_truncate before truncate on "ledger_entries" for each statement execute function ledger_entries_append_only();`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists ledger_entries_no_update on "ledger_entries";`);
    this.addSql(`drop trigger if exists ledger_entries_no_truncate on "ledger_entries";`);
    this.addSql(`drop function if exists ledger_entries_append_only();`);
    this.addSql(`alter table "ledger_entries" drop constraint "ledger_entries_org_id_foreign";`);

    this.addSql(`alter table "api_keys" drop constraint "api_keys_org_id_foreign";`);

    this.addSql(`alter table "users" drop constraint "users_org_id_foreign";`);

    this.addSql(`drop table if exists "orgs" cascade;`);

    this.addSql(`drop table if exists "ledger_entries" cascade;`);

    this.addSql(`drop table if exists "api_keys" cascade;`);

    this.addSql(`drop table if exists "users" cascade;`);
  }
}
