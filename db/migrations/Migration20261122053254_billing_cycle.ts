import { Migration } from '@mikro-orm/migrations';

export class Migration20261122053254_billing_cycle extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "payouts" ("id" varchar(40) not null, "org_id" varchar(40) not null, "period" varchar(7) not null, "amount_cents" bigint not null, "destination" varchar(64) not null, "status" text check ("status" in ('pending', 'paid', 'failed')) not null default 'pending', "stripe_transfer_id" varchar(255) null, "idempotency_key" varchar(200) not null, "failure_reason" varchar(500) null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "payouts_pkey" primary key ("id"), constraint payouts_amount_positive check (amount_cents > 0));`,
    );
    this.addSql(`create index "payouts_org_id_index" on "payouts" ("org_id");`);
    this.addSql(`alter table "payouts" add constraint "payouts_idempotency_key_unique" unique ("idempotency_key");`);
    this.addSql(`alter table "payouts" add constraint "payouts_org_id_period_unique" unique ("org_id", "period");`);

    this.addSql(
      `alter table "payouts" add constraint "payouts_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade;`,
    );

    this.addSql(`alter table "payments" add column "payment_intent_id" varchar(255) null;`);
    this.addSql(`create index "payments_payment_intent_id_index" on "payments" ("payment_intent_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "payouts" cascade;`);

    this.addSql(`drop index "payments_payment_intent_id_index";`);
    this.addSql(`alter table "payments" drop column "payment_intent_id";`);
  }
}
