import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 10, gateway money: the idempotency backstop in Postgres (one row per successful call with a client key),
 * the client's own request id kept apart from ours, a card-billed org's credit limit, and provider earnings accrued
 * off the hot path (a queue folded into the provider's ledger by the worker).
 */
export class Migration20261123100300_gateway_money extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "idempotency_records" ("org_id" varchar(40) not null, "key_id" varchar(40) not null, "idempotency_key" varchar(200) not null, "usage_id" varchar(40) not null, "request_hash" varchar(64) not null, "extra" jsonb null, "created_at" timestamptz not null default now(), constraint "idempotency_records_pkey" primary key ("org_id", "key_id", "idempotency_key"));`,
    );
    this.addSql(`alter table "usage_events" add column "client_request_id" varchar(128) null;`);
    this.addSql(`alter table "orgs" add column "credit_limit_cents" bigint null;`);
    this.addSql(
      `alter table "orgs" add constraint orgs_credit_limit_nonnegative check (credit_limit_cents IS NULL OR credit_limit_cents >= 0);`,
    );
    this.addSql(
      `create table "earning_accruals" ("usage_id" varchar(40) not null, "provider_org_id" varchar(40) not null, "consumer_org_id" varchar(40) not null, "gross_cents" bigint not null, "fee_cents" bigint not null, "created_at" timestamptz not null default now(), constraint "earning_accruals_pkey" primary key ("usage_id"), constraint earning_accruals_money check (gross_cents > 0 AND fee_cents >= 0 AND fee_cents <= gross_cents));`,
    );
    this.addSql(`create index "earning_accruals_created_idx" on "earning_accruals" ("created_at", "usage_id");`);
    // A chargeback after a payout may take a prepaid provider's balance below zero (carried until earnings repay it).
    this.addSql(`alter table "orgs" add column "chargeback_carry_cents" bigint not null default 0;`);
    this.addSql(`alter table "orgs" drop constraint orgs_prepaid_credit_nonnegative;`);
    this.addSql(
      `alter table "orgs" add constraint orgs_prepaid_credit_nonnegative check (billing_mode <> 'prepaid' OR credit_cents >= -chargeback_carry_cents);`,
    );
    this.addSql(
      `alter table "orgs" add constraint orgs_chargeback_carry_nonnegative check (chargeback_carry_cents >= 0);`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "orgs" drop constraint orgs_chargeback_carry_nonnegative;`);
    this.addSql(`alter table "orgs" drop constraint orgs_prepaid_credit_nonnegative;`);
    this.addSql(
      `alter table "orgs" add constraint orgs_prepaid_credit_nonnegative check (billing_mode <> 'prepaid' OR credit_cents >= 0);`,
    );
    this.addSql(`alter table "orgs" drop column "chargeback_carry_cents";`);
    this.addSql(`drop table if exists "earning_accruals" cascade;`);
    this.addSql(`alter table "orgs" drop constraint if exists orgs_credit_limit_nonnegative;`);
    this.addSql(`alter table "orgs" drop column "credit_limit_cents";`);
    this.addSql(`alter table "usage_events" drop column "client_request_id";`);
    this.addSql(`drop table if exists "idempotency_records" cascade;`);
  }
}
