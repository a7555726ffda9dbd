import { Migration } from '@mikro-orm/migrations';

/**
 * Key governance and agent-first elevation (issue 10): a key minted by a key records its parent, and an email
 * verification can be an anonymous org's request to attach an address (no user until the link is used).
 */
export class Migration20261123100000_key_governance extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "api_keys" add column "parent_key_id" varchar(40) null;`);
    this.addSql(
      `alter table "api_keys" add constraint "api_keys_parent_key_id_foreign" foreign key ("parent_key_id") references "api_keys" ("id") on update cascade on delete set null;`,
    );
    this.addSql(`create index "api_keys_parent_key_id_index" on "api_keys" ("parent_key_id");`);

    this.addSql(`alter table "email_verifications" alter column "user_id" drop not null;`);
    this.addSql(`alter table "email_verifications" drop constraint "email_verifications_user_id_foreign";`);
    this.addSql(
      `alter table "email_verifications" add constraint "email_verifications_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `alter table "email_verifications" add column "email" varchar(320) null, add column "org_id" varchar(40) null, add column "key_id" varchar(40) null;`,
    );
    this.addSql(
      `alter table "email_verifications" add constraint "email_verifications_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `alter table "email_verifications" add constraint "email_verifications_key_id_foreign" foreign key ("key_id") references "api_keys" ("id") on update cascade on delete set null;`,
    );
    this.addSql(`create index "email_verifications_org_id_index" on "email_verifications" ("org_id");`);
    this.addSql(`create index "email_verifications_key_id_index" on "email_verifications" ("key_id");`);
    this.addSql(
      `alter table "email_verifications" add constraint email_verifications_target check ((user_id IS NOT NULL) OR (email IS NOT NULL AND org_id IS NOT NULL AND key_id IS NOT NULL));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "email_verifications" drop constraint email_verifications_target;`);
    this.addSql(`alter table "email_verifications" drop constraint "email_verifications_org_id_foreign";`);
    this.addSql(`alter table "email_verifications" drop constraint "email_verifications_key_id_foreign";`);
    this.addSql(`drop index "email_verifications_org_id_index";`);
    this.addSql(`drop index "email_verifications_key_id_index";`);
    this.addSql(`alter table "email_verifications" drop column "email", drop column "org_id", drop column "key_id";`);
    this.addSql(`delete from "email_verifications" where "user_id" is null;`);
    this.addSql(`alter table "email_verifications" alter column "user_id" set not null;`);
    this.addSql(`alter table "email_verifications" drop constraint "email_verifications_user_id_foreign";`);
    this.addSql(
      `alter table "email_verifications" add constraint "email_verifications_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade;`,
    );

    this.addSql(`alter table "api_keys" drop constraint "api_keys_parent_key_id_foreign";`);
    this.addSql(`drop index "api_keys_parent_key_id_index";`);
    this.addSql(`alter table "api_keys" drop column "parent_key_id";`);
  }
}
