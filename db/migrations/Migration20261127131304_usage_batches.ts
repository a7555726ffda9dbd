import { Migration } from '@mikro-orm/migrations';

/**
 * Books per batch (issue 23; docs/decisions.md, Books per batch): the gateway books one consumer ledger row per
 * (org, usage batch) instead of one per paid call.
 *
 * - `usage_batches`: one row per batch (org, call count, charged / credit-applied / billable sums, first and last call),
 *   kept forever: usage partitions are retired, batches are not.
 * - `usage_events.batch_id`: the batch that booked a paid call (null for free and failed calls and for calls booked
 *   before this migration, whose ledger rows carry `usage:{id}`). usage_events is partitioned: a column added to the
 *   parent is added to every partition, and a partition created later has it too.
 * - `earning_accruals` are keyed by their own id and hold a batch (`batch_id`, one per provider and batch) or, for the
 *   accruals queued before this migration, one call (`usage_id`; its id is the usage id, so it folds into the same
 *   `earning:{usage}` / `fee:{usage}` rows as before).
 */
export class Migration20261127131304_usage_batches extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "usage_batches" ("id" varchar(40) not null, "org_id" varchar(40) not null, "calls" int not null, "charged_cents" bigint not null, "credit_applied_cents" bigint not null, "billable_cents" bigint not null, "first_usage_id" varchar(40) not null, "last_usage_id" varchar(40) not null, "first_at" timestamptz not null, "last_at" timestamptz not null, "created_at" timestamptz not null default now(), constraint "usage_batches_pkey" primary key ("id"), constraint usage_batches_money check (calls > 0 AND charged_cents > 0 AND credit_applied_cents >= 0 AND billable_cents >= 0 AND first_at <= last_at));`,
    );
    this.addSql(`create index "usage_batches_org_last_idx" on "usage_batches" ("org_id", "last_at");`);
    this.addSql(
      `alter table "usage_batches" add constraint "usage_batches_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade;`,
    );

    this.addSql(`drop index "earning_accruals_created_idx";`);
    this.addSql(`alter table "earning_accruals" drop constraint "earning_accruals_pkey";`);
    this.addSql(
      `alter table "earning_accruals" add column "id" varchar(40) null, add column "batch_id" varchar(40) null;`,
    );
    this.addSql(`update "earning_accruals" set "id" = "usage_id";`);
    this.addSql(`alter table "earning_accruals" alter column "id" set not null;`);
    this.addSql(`alter table "earning_accruals" alter column "usage_id" drop not null;`);
    this.addSql(`create index "earning_accruals_created_idx" on "earning_accruals" ("created_at", "id");`);
    this.addSql(`alter table "earning_accruals" add constraint "earning_accruals_pkey" primary key ("id");`);
    this.addSql(
      `alter table "earning_accruals" add constraint earning_accruals_source check(batch_id IS NOT NULL OR usage_id IS NOT NULL);`,
    );

    this.addSql(`alter table "usage_events" add column "batch_id" varchar(40) null;`);
  }

  override async down(): Promise<void> {
    // Only an install that booked no batch yet can go back (a batch's accrual has no single call to key it by).
    this.addSql(`drop table if exists "usage_batches" cascade;`);
    this.addSql(`drop index "earning_accruals_created_idx";`);
    this.addSql(`alter table "earning_accruals" drop constraint "earning_accruals_pkey";`);
    this.addSql(`alter table "earning_accruals" drop constraint earning_accruals_source;`);
    this.addSql(`alter table "earning_accruals" drop column "id", drop column "batch_id";`);
    this.addSql(`alter table "earning_accruals" alter column "usage_id" set not null;`);
    this.addSql(`create index "earning_accruals_created_idx" on "earning_accruals" ("created_at", "usage_id");`);
    this.addSql(`alter table "earning_accruals" add constraint "earning_accruals_pkey" primary key ("usage_id");`);
    this.addSql(`alter table "usage_events" drop column "batch_id";`);
  }
}
