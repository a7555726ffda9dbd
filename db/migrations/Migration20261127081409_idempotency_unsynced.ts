import { Migration } from '@mikro-orm/migrations';

/**
 * Idempotent calls booked in Postgres past the fast state's settle (issue 21 item 14): until every gateway process
 * has added them to Redis's per-org set of seen keys, no process answers a first-seen Idempotency-Key from Redis alone
 * (db/entities/idempotency-unsynced.entity.ts, docs/durability.md).
 */
export class Migration20261127081409_idempotency_unsynced extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "idempotency_unsynced" ("org_id" varchar(40) not null, "key_id" varchar(40) not null, "idempotency_key" varchar(200) not null, "created_at" timestamptz not null default now(), constraint "idempotency_unsynced_pkey" primary key ("org_id", "key_id", "idempotency_key"));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "idempotency_unsynced" cascade;`);
  }
}
