import { Migration } from '@mikro-orm/migrations';

/**
 * usage_events becomes a table range-partitioned by `created_at` (issue 13; docs/decisions.md, Usage partitions):
 * one partition per UTC month, plus a default partition so an insert never fails for want of one. The primary key
 * becomes (id, created_at), as a partitioned table's unique keys must hold its partition key; every writer of a
 * usage id writes it with the instant the id encodes, so (id, created_at) is as unique as id was. Nothing references
 * usage_events by foreign key (ledger rows, earning accruals and idempotency records carry the usage id as a value).
 * Every existing row is kept: the old table is renamed, the partitioned one created with partitions for every month
 * holding rows through three months ahead, the rows copied, the old table dropped. Later months are created by
 * core/usage/usage-partitions.ts (the `usage-partitions` schedule and the worker's start).
 */
const COLUMNS = `"id", "org_id", "key_id", "api_slug", "api_id", "endpoint_id", "method", "path", "status", "outcome",
  "cost_cents", "price_cents_effective", "credit_applied_cents", "billable_cents", "latency_ms", "idempotency_key",
  "request_id", "client_request_id", "created_at"`;

const INDEXES: [string, string][] = [
  ['usage_events_org_created_idx', '"org_id", "created_at"'],
  ['usage_events_key_created_idx', '"key_id", "created_at"'],
  ['usage_events_api_created_idx', '"api_id", "created_at"'],
  ['usage_events_created_idx', '"created_at"'],
];

function createTable(partitioned: boolean): string {
  return `create table "usage_events" ("id" varchar(40) not null, "org_id" varchar(40) not null, "key_id" varchar(40) not null, "api_slug" varchar(64) not null, "api_id" varchar(40) null, "endpoint_id" varchar(40) null, "method" varchar(10) not null, "path" varchar(2000) not null, "status" smallint not null, "outcome" text check ("outcome" in ('success', 'failed')) not null, "cost_cents" bigint not null default 0, "price_cents_effective" bigint not null default 0, "credit_applied_cents" bigint not null default 0, "billable_cents" bigint not null default 0, "latency_ms" int not null, "idempotency_key" varchar(200) null, "request_id" varchar(128) not null, "client_request_id" varchar(128) null, "created_at" timestamptz not null default now(), constraint "usage_events_pkey" primary key (${partitioned ? '"id", "created_at"' : '"id"'}), constraint usage_events_money_nonnegative check (cost_cents >= 0 AND price_cents_effective >= 0 AND credit_applied_cents >= 0 AND billable_cents >= 0))${partitioned ? ' partition by range ("created_at")' : ''};`;
}

export class Migration20261125120000_usage_partitions extends Migration {
  private moveAside(): void {
    this.addSql(`alter table "usage_events" rename to "usage_events_old";`);
    this.addSql(`alter table "usage_events_old" rename constraint "usage_events_pkey" to "usage_events_old_pkey";`);
    this.addSql(
      `alter table "usage_events_old" rename constraint "usage_events_org_id_foreign" to "usage_events_old_org_id_foreign";`,
    );
    this.addSql(
      `alter table "usage_events_old" rename constraint "usage_events_key_id_foreign" to "usage_events_old_key_id_foreign";`,
    );
    for (const [name] of INDEXES)
      this.addSql(`alter index "${name}" rename to "${name.replace('usage_events_', 'usage_events_old_')}";`);
  }

  private finish(): void {
    for (const [name, columns] of INDEXES) this.addSql(`create index "${name}" on "usage_events" (${columns});`);
    this.addSql(
      `alter table "usage_events" add constraint "usage_events_org_id_foreign" foreign key ("org_id") references "orgs" ("id") on update cascade;`,
    );
    this.addSql(
      `alter table "usage_events" add constraint "usage_events_key_id_foreign" foreign key ("key_id") references "api_keys" ("id") on update cascade;`,
    );
    this.addSql(`insert into "usage_events" (${COLUMNS}) select ${COLUMNS} from "usage_events_old";`);
    this.addSql(`drop table "usage_events_old";`);
  }

  override async up(): Promise<void> {
    this.moveAside();
    this.addSql(createTable(true));
    this.addSql(`create table "usage_events_default" partition of "usage_events" default;`);
    // One partition per UTC month from the oldest row's month (or this month) through three months ahead.
    this.addSql(`do $$
declare
  m timestamptz;
begin
  for m in
    select generate_series(
      least(date_trunc('month', now() at time zone 'UTC'),
            coalesce((select date_trunc('month', min(created_at) at time zone 'UTC') from usage_events_old),
                     date_trunc('month', now() at time zone 'UTC'))),
      date_trunc('month', now() at time zone 'UTC') + interval '3 months',
      interval '1 month') at time zone 'UTC'
  loop
    execute format('create table %I partition of usage_events for values from (%L) to (%L)',
      'usage_events_p' || to_char(m at time zone 'UTC', 'YYYYMM'), m, (m at time zone 'UTC' + interval '1 month') at time zone 'UTC');
  end loop;
end $$;`);
    this.finish();
  }

  override async down(): Promise<void> {
    this.moveAside();
    this.addSql(createTable(false));
    this.finish();
  }
}
