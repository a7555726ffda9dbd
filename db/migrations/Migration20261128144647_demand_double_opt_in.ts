import { Migration } from '@mikro-orm/migrations';

/**
 * Demand board double opt-in (issue 31, section 8): an address the requesting org has not proven is told about a
 * matching listing only once its owner confirms it from the mailed link. The vote keeps the link token's SHA-256 (unique),
 * when the mail went out, when the link expires (then the address is forgotten) and when it was confirmed.
 */
export class Migration20261128144647_demand_double_opt_in extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "api_request_votes" add column "email_token_hash" varchar(64) null, add column "email_confirmation_sent_at" timestamptz null, add column "email_token_expires_at" timestamptz null, add column "email_confirmed_at" timestamptz null;`,
    );
    this.addSql(
      `alter table "api_request_votes" add constraint "api_request_votes_email_token_hash_unique" unique ("email_token_hash");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "api_request_votes" drop constraint "api_request_votes_email_token_hash_unique";`);
    this.addSql(
      `alter table "api_request_votes" drop column "email_token_hash", drop column "email_confirmation_sent_at", drop column "email_token_expires_at", drop column "email_confirmed_at";`,
    );
  }
}
