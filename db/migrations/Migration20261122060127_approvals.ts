import { Migration } from '@mikro-orm/migrations';

export class Migration20261122060127_approvals extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "api_keys" add column "approved_cents" bigint not null default 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "api_keys" drop column "approved_cents";`);
  }
}
