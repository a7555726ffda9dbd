import { Migration } from '@mikro-orm/migrations';

export class Migration20261122050311_billing extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "payments" ("id" varchar(40) not null, "org_id" varchar(40) not null, "kind" text check ("kind" in ('checkout', 'auto_reload', 'usage_charge')) not null, "stripe_ref" varchar(255) null, "amount_cents" bigint not null, "credit_cents" bigint not null, "status" text check ("status" in ('pending', 'succeeded', 'failed', 'expired')) not null default 'pending', "idempotency_key" varchar(200) not null, "failure_reason" varchar(500) null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "payments_pkey" primary key ("id"), constraint payments_amounts_positive check (amount_cents > 0 AND credit_cents > 0));`,
    );
    this.addSql(`create index "payments_org_id_index" on "payments" ("org_id");`);
    this.addSql(`alter table "payments" add constraint "payments_stripe_ref_unique" unique ("stripe_ref");`);
    this.addSql(`alter table "payments" add constraint "payments_idempotency_key_unique" unique ("idempotency_key");`);

    this.addSql(
      `create table "stripe_events" ("id" varchar(255) not null, "type" varchar(100) not null, "stripe_created_at" timestamptz not null, "received_at" timestamptz not null default now(), "outcome" varchar(200) not null, "org_id" varchar(40) null, constraint "stripe_events_pkey" primary key ("id"));`,
    );

    this.addSql(
      `alter table "payments" add constraint "payments_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "orgs" add column "stripe_customer_id" varchar(64) null, add column "has_payment_method" boolean not null default false, add column "default_payment_method_id" varchar(64) null, add column "auto_reload_enabled" boolean not null default false, add column "auto_reload_threshold_cents" bigint null, add column "auto_reload_amount_cents" bigint null, add column "reload_requested_at" timestamptz null;`,
    );
    this.addSql(`alter table "orgs" add constraint "orgs_stripe_customer_id_unique" unique ("stripe_customer_id");`);
    this.addSql(
      `alter table "orgs" add constraint orgs_auto_reload_settings check(auto_reload_enabled = false OR (auto_reload_threshold_cents IS NOT NULL AND auto_reload_amount_cents IS NOT NULL AND auto_reload_amount_cents > 0));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "payments" cascade;`);

    this.addSql(`drop table if exists "stripe_events" cascade;`);

    this.addSql(`alter table "orgs" drop constraint "orgs_stripe_customer_id_unique";`);
    this.addSql(`alter table "orgs" drop constraint orgs_auto_reload_settings;`);
    this.addSql(
      `alter table "orgs" drop column "stripe_customer_id", drop column "has_payment_method", drop column "default_payment_method_id", drop column "auto_reload_enabled", drop column "auto_reload_threshold_cents", drop column "auto_reload_amount_cents", drop column "reload_requested_at";`,
    );
  }
}
