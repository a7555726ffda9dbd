import { Migration } from '@mikro-orm/migrations';

/**
 * OAuth 2.1 for agents (issue 12): what the authorization server stores (codes, tokens, grants, clients,
 * interactions), keyed by the SHA-256 of the model and id, never by a code or token itself (core/oauth/).
 */
export class Migration20261123130000_oauth extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "oauth_payloads" ("id" varchar(64) not null, "model" varchar(40) not null, "payload" jsonb not null, "grant_id" varchar(100) null, "uid_hash" varchar(64) null, "expires_at" timestamptz null, "consumed_at" timestamptz null, "created_at" timestamptz not null default now(), constraint "oauth_payloads_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "oauth_payloads_grant_id_index" on "oauth_payloads" ("grant_id");`);
    this.addSql(`create index "oauth_payloads_uid_hash_index" on "oauth_payloads" ("uid_hash");`);
    this.addSql(`create index "oauth_payloads_expires_at_index" on "oauth_payloads" ("expires_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "oauth_payloads" cascade;`);
  }
}
