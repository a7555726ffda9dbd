import { Migration } from '@mikro-orm/migrations';

/**
 * Durable agent-tool sessions (issue 12): one row per `Mcp-Session-Id` (stored as its SHA-256), bound to the key
 * that opened it, with what rebuilding its MCP server needs; any instance serves it, and it survives restarts.
 */
export class Migration20261125100000_mcp_sessions extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "mcp_sessions" ("id_hash" varchar(64) not null, "org_id" varchar(40) not null, "key_id" varchar(40) not null, "protocol_version" varchar(20) not null, "client_info" jsonb not null, "client_capabilities" jsonb not null, "created_at" timestamptz not null default now(), "last_seen_at" timestamptz not null, "ended_at" timestamptz null, "end_reason" text check ("end_reason" in ('terminated', 'evicted', 'key_revoked', 'not_restorable')) null, constraint "mcp_sessions_pkey" primary key ("id_hash"));`,
    );
    this.addSql(`create index "mcp_sessions_key_id_index" on "mcp_sessions" ("key_id");`);
    this.addSql(`create index "mcp_sessions_org_id_last_seen_at_index" on "mcp_sessions" ("org_id", "last_seen_at");`);
    this.addSql(`create index "mcp_sessions_last_seen_at_index" on "mcp_sessions" ("last_seen_at");`);
    this.addSql(
      `alter table "mcp_sessions" add constraint "mcp_sessions_key_id_foreign" foreign key ("key_id") references "api_keys" ("id") on update cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "mcp_sessions" cascade;`);
  }
}
