import { Migration } from '@mikro-orm/migrations';

/**
 * Catalog APIs as an agent's own tools (issue 25 item 3): the endpoints a key installed with `add_api_tools`, one row
 * per (key, tool name); deleting the key, the listing or the endpoint deletes its rows.
 */
export class Migration20261127160000_mcp_installed_tools extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "mcp_installed_tools" ("key_id" varchar(40) not null, "tool_name" varchar(64) not null, "api_id" varchar(40) not null, "endpoint_id" varchar(40) not null, "price_cents" bigint not null, "schema_hash" varchar(64) not null, "created_at" timestamptz not null default now(), constraint "mcp_installed_tools_pkey" primary key ("key_id", "tool_name"));`,
    );
    this.addSql(`create index "mcp_installed_tools_api_id_index" on "mcp_installed_tools" ("api_id");`);
    this.addSql(
      `alter table "mcp_installed_tools" add constraint "mcp_installed_tools_key_endpoint_uniq" unique ("key_id", "endpoint_id");`,
    );
    this.addSql(
      `alter table "mcp_installed_tools" add constraint "mcp_installed_tools_key_id_foreign" foreign key ("key_id") references "api_keys" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "mcp_installed_tools" add constraint "mcp_installed_tools_api_id_foreign" foreign key ("api_id") references "apis" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "mcp_installed_tools" add constraint "mcp_installed_tools_endpoint_id_foreign" foreign key ("endpoint_id") references "endpoints" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "mcp_installed_tools" cascade;`);
  }
}
