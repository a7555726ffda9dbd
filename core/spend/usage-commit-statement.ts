/**
 * The usage committer's common case (core/spend/usage-committer.ts) in one statement: the batch goes in as one JSON
 * parameter, and data-modifying CTEs write the usage events, the usage batches with their ledger rows, the accruals,
 * the orgs' balances and the keys' spend (in all and on their latest day); the totals come back for the fast state.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { splitPrice } from '../money/split.js';
import { creditAppliedSql, crossesReloadThresholdSql } from '../money/money-rules.js';
import { newId } from '../ids.js';
import type { CallRecord, CommittedCall } from './usage-committer.js';

/** The slice of knex's pg client this file uses (a pooled node-postgres connection). */
interface PooledClient {
  acquireConnection(): Promise<{
    query<R>(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
  }>;
  releaseConnection(connection: unknown): Promise<void>;
}

interface CommitResult {
  orgs: { id: string; credit: number | string; version: number | string }[] | null;
  keys: { id: string; spent: number | string }[] | null;
  days: { key_id: string; day: string; spent: number | string }[] | null;
  usage: { id: string; credit: number | string; billable: number | string }[] | null;
}

/** The money rules inside the statement (core/money/money-rules.ts). */
const CREDIT_APPLIED = creditAppliedSql('c.price', 'r.balance_after + c.price');
const RELOAD_CROSSED = crossesReloadThresholdSql(
  'auto_reload_enabled',
  'auto_reload_threshold_cents',
  'balance_after - amount',
  'balance_after',
);

/**
 * A key's spend on its latest UTC day, on its own row (issue 32): `t.day` is the latest day of the key's calls in the
 * batch and `t.ds` their spend that day. A newer day starts over, an older one (a batch drained late) leaves the day's
 * spend as it is: only the latest day is ever read (the daily cap, `spent_today_cents`).
 */
export const DAY_SPENT_SET = `day_spent_cents = case when k.spent_day = t.day then k.day_spent_cents + t.ds
                                when k.spent_day is null or k.spent_day < t.day then t.ds
                                else k.day_spent_cents end,
         spent_day = greatest(k.spent_day, t.day)`;

const COMMIT_TEMPLATE = `
with raw as (
  select * from jsonb_to_recordset(?::jsonb) as c(
    seq int, id text, org_id text, key_id text, provider_id text, api_slug text, api_id text, endpoint_id text,
    method text, path text, status int, outcome text, price bigint, eff bigint, fee bigint, latency int, idem text,
    req_hash text, extra jsonb, request_id text, client_request_id text, day text, created_at timestamptz,
    bid0 text, bid1 text, lid0 text, lid1 text, aid0 text, aid1 text, anc text[], cr bigint, bl bigint, uns boolean)
),
input as (
  select * from raw r /*KNOWN*/
),
claimed as (
  insert into idempotency_records (org_id, key_id, idempotency_key, usage_id, request_hash, extra, created_at)
  select org_id, key_id, idem, id, req_hash, extra, created_at from input where idem is not null and outcome = 'success'
  on conflict do nothing
  returning usage_id
),
ins_unsynced as (
  insert into idempotency_unsynced (org_id, key_id, idempotency_key, created_at)
  select org_id, key_id, idem, created_at from input where uns and id in (select usage_id from claimed)
  on conflict do nothing
),
calls as (
  select * from input i where i.idem is null or i.outcome <> 'success' or i.id in (select usage_id from claimed)
),
locked as (
  select o.id, o.credit_cents, o.auto_reload_enabled, o.auto_reload_threshold_cents from orgs o
   where o.id in (select org_id from calls where price > 0)
   order by o.id for update
),
running as (
  select c.seq, c.org_id, -c.price as amount, c.id as usage_id,
         l.credit_cents - sum(c.price) over (partition by c.org_id order by c.seq) as balance_after,
         l.auto_reload_enabled, l.auto_reload_threshold_cents
    from calls c join locked l on l.id = c.org_id where c.price > 0
),
priced as (
  select c.*, r.usage_id is not null as paid, coalesce(c.cr, ${CREDIT_APPLIED}, 0) as credit,
         coalesce(c.bl, c.price - coalesce(${CREDIT_APPLIED}, 0)) as billable
    from calls c left join running r on r.usage_id = c.id
),
booked as (
  select p.*,
         case when p.paid then case when p.billable > 0 then p.bid1 else p.bid0 end end as batch_id,
         case when p.billable > 0 then p.lid1 else p.lid0 end as ledger_id,
         case when p.billable > 0 then p.aid1 else p.aid0 end as accrual_id
    from priced p
),
batches as (
  select batch_id, org_id, min(ledger_id) as ledger_id, count(*) as n, sum(price) as charged, sum(credit) as credit,
         sum(billable) as billable, (array_agg(id order by seq))[1] as first_id,
         (array_agg(id order by seq desc))[1] as last_id, min(created_at) as first_at, max(created_at) as last_at,
         min(seq) as first_seq
    from booked where paid group by batch_id, org_id
),
ins_batches as (
  insert into usage_batches (id, org_id, calls, charged_cents, credit_applied_cents, billable_cents, first_usage_id,
    last_usage_id, first_at, last_at)
  select batch_id, org_id, n, charged, credit, billable, first_id, last_id, first_at, last_at from batches
),
ins_ledger as (
  insert into ledger_entries (id, org_id, kind, amount_cents, balance_after_cents, idempotency_key, reference, memo,
    created_at)
  select b.ledger_id, b.org_id, 'usage', -b.charged,
         l.credit_cents - sum(b.charged) over (partition by b.org_id order by b.first_seq),
         'usage_batch:' || b.batch_id, 'usage_batch:' || b.batch_id,
         b.n || case when b.n = 1 then ' paid call' else ' paid calls' end, b.last_at
    from batches b join locked l on l.id = b.org_id
),
ins_accruals as (
  insert into earning_accruals (id, batch_id, provider_org_id, consumer_org_id, gross_cents, fee_cents, created_at)
  select min(accrual_id), batch_id, provider_id, org_id, sum(price), sum(fee), max(created_at)
    from booked where paid group by batch_id, provider_id, org_id
),
ins_usage as (
  insert into usage_events (id, org_id, key_id, api_slug, api_id, endpoint_id, method, path, status, outcome,
    cost_cents, price_cents_effective, credit_applied_cents, billable_cents, latency_ms, idempotency_key, request_id,
    client_request_id, batch_id, created_at)
  select c.id, c.org_id, c.key_id, c.api_slug, c.api_id, c.endpoint_id, c.method, c.path, c.status, c.outcome, c.price,
         c.eff, c.credit, c.billable, c.latency, c.idem, c.request_id, c.client_request_id, c.batch_id, c.created_at
    from booked c
  returning id, credit_applied_cents as credit, billable_cents as billable
),
totals as (
  select org_id, (array_agg(balance_after order by seq desc))[1] as final, count(*) as n,
         bool_or(${RELOAD_CROSSED}) as reload
    from running group by org_id
),
upd_orgs as (
  update orgs o set credit_cents = t.final, balance_version = o.balance_version + t.n, updated_at = now(),
         reload_requested_at = case when t.reload then coalesce(o.reload_requested_at, now()) else o.reload_requested_at end
    from totals t where o.id = t.org_id
  returning o.id, o.credit_cents as credit, o.balance_version as version
),
upd_keys as (
  update api_keys k set spent_cents = k.spent_cents + t.s,
         ${DAY_SPENT_SET},
         last_used_at = case when t.own then now() else k.last_used_at end
    from (select key_id, sum(price) as s, bool_or(own) as own, max(day) as day,
                 sum(case when day = latest then price else 0 end) as ds
            from (select spend.*, max(day) over (partition by key_id) as latest from (
                    select key_id, day, price, true as own from calls where price > 0
                    union all
                    select a.key_id, c.day, c.price, false from calls c cross join lateral unnest(c.anc) as a(key_id)
                     where c.price > 0
                  ) spend) latest_day
           group by key_id) t
   where k.id = t.key_id
  returning k.id, k.spent_cents as spent, k.spent_day as day, k.day_spent_cents as day_spent
)
select json_build_object(
  'orgs', (select json_agg(upd_orgs) from upd_orgs),
  'keys', (select json_agg(upd_keys) from upd_keys),
  'days', (select json_agg(json_build_object('key_id', id, 'day', day, 'spent', day_spent)) from upd_keys),
  'usage', (select json_agg(ins_usage) from ins_usage)
) as result`;

/** The common case: no call of the batch is in Postgres yet (a duplicate fails the statement on a unique key). */
const ONE_STATEMENT_COMMIT = COMMIT_TEMPLATE.replace('/*KNOWN*/', '');
/** The common case's text (the benchmark's EXPLAIN, bench/gateway/commit-cost.ts). */
export const COMMIT_STATEMENT = ONE_STATEMENT_COMMIT;
/**
 * After a unique violation: some calls of the batch are already in Postgres (drained again after a drainer died
 * between its commit and its acknowledgement), and are skipped. A separate statement because the probe runs per call
 * across usage_events' partitions, which the common case should not pay for.
 */
const DEDUP_COMMIT = COMMIT_TEMPLATE.replace(
  '/*KNOWN*/',
  'where not exists (select 1 from usage_events u where u.id = r.id and u.created_at = r.created_at)',
);

/** Per consumer org: its batch and ledger row for calls paid wholly from credit (0) and with a billable part (1). */
interface OrgIds {
  bid0: string;
  bid1: string;
  lid0: string;
  lid1: string;
}
/** Per (consumer org, provider): the accrual in each of the org's two batches. */
interface AccrualIds {
  aid0: string;
  aid1: string;
}

/** The statement's JSON parameter: one row per call, in call order. */
export function commitJson(batch: readonly { call: CallRecord }[], fee: number): string {
  // Ids the statement may need, minted here: per consumer org its batch and ledger row for calls paid wholly from
  // credit (0) and for calls with a billable part (1), and per (org, provider) the accrual of each; unused ones lapse.
  const orgIds = new Map<string, OrgIds>();
  const accrualIds = new Map<string, AccrualIds>();
  const calls = batch.map(({ call }, seq) => {
    const split = call.priceCents > 0 ? splitPrice(call.priceCents, fee) : null;
    let ids = orgIds.get(call.orgId);
    let aids = accrualIds.get(`${call.orgId}|${call.providerOrgId}`);
    if (split && !ids) {
      ids = {
        bid0: newId('usageBatch'),
        bid1: newId('usageBatch'),
        lid0: newId('ledgerEntry'),
        lid1: newId('ledgerEntry'),
      };
      orgIds.set(call.orgId, ids);
    }
    if (split && !aids) {
      aids = { aid0: newId('earningAccrual'), aid1: newId('earningAccrual') };
      accrualIds.set(`${call.orgId}|${call.providerOrgId}`, aids);
    }
    return commitRow(call, seq, split?.platformFeeCents ?? 0, ids, aids);
  });
  return JSON.stringify(calls);
}

/** One call's row of the statement's input (the columns of `raw` in COMMIT_TEMPLATE). */
function commitRow(call: CallRecord, seq: number, fee: number, ids: OrgIds | undefined, aids: AccrualIds | undefined) {
  return {
    seq,
    id: call.usageId,
    org_id: call.orgId,
    key_id: call.keyId,
    provider_id: call.providerOrgId,
    api_slug: call.apiSlug,
    api_id: call.apiId,
    endpoint_id: call.endpointId,
    method: call.method,
    path: call.path.slice(0, 2000),
    status: call.status,
    outcome: call.outcome,
    price: call.priceCents,
    eff: call.priceCentsEffective,
    fee,
    latency: Math.round(call.latencyMs),
    idem: call.idempotencyKey,
    req_hash: call.requestHash ?? '',
    extra: call.replayExtra ?? null,
    request_id: call.requestId,
    client_request_id: call.clientRequestId ?? null,
    day: call.day,
    created_at: call.at.toISOString(),
    bid0: ids?.bid0 ?? null,
    bid1: ids?.bid1 ?? null,
    lid0: ids?.lid0 ?? null,
    lid1: ids?.lid1 ?? null,
    aid0: aids?.aid0 ?? null,
    aid1: aids?.aid1 ?? null,
    anc: call.ancestorKeyIds ?? [],
    cr: call.creditAppliedCents ?? null,
    bl: call.billableCents ?? null,
    uns: call.unsynced === true,
  };
}

/**
 * Run the commit statement. On Postgres it is a named prepared statement on a pooled connection: planning this
 * statement costs more than running it for a small batch, and a prepared statement is planned once per connection.
 */
export async function runCommit(orm: MikroORM, prepared: boolean, json: string, dedup: boolean): Promise<CommitResult> {
  const statement = dedup ? DEDUP_COMMIT : ONE_STATEMENT_COMMIT;
  const connection = orm.em.getConnection();
  if (!prepared) {
    const [row] = await connection.execute<{ result: CommitResult }[]>(statement, [json]);
    return row!.result;
  }
  const client = connection.getKnex().client as unknown as PooledClient;
  const pgConnection = await client.acquireConnection();
  try {
    const res = await pgConnection.query<{ result: CommitResult }>({
      name: dedup ? 'usage_commit_dedup_v9' : 'usage_commit_v9',
      text: statement.replace('?::jsonb', '$1::jsonb'),
      values: [json],
    });
    return res.rows[0]!.result;
  } finally {
    await client.releaseConnection(pgConnection);
  }
}

/** Each call's answer from the statement's totals, in call order (a call not inserted was a duplicate). */
export function committedCalls(batch: readonly { call: CallRecord }[], result: CommitResult): CommittedCall[] {
  const orgs = new Map((result.orgs ?? []).map((o) => [o.id, o]));
  const keys = new Map((result.keys ?? []).map((k) => [k.id, Number(k.spent)]));
  const days = new Map((result.days ?? []).map((d) => [`${d.key_id}|${d.day}`, Number(d.spent)]));
  const usage = new Map((result.usage ?? []).map((u) => [u.id, u]));
  return batch.map(({ call }) => {
    const o = orgs.get(call.orgId);
    const spent = keys.get(call.keyId);
    const day = days.get(`${call.keyId}|${call.day}`);
    const u = usage.get(call.usageId);
    const anc = call.ancestorKeyIds ?? [];
    const ancDays = anc.map((id) => `${id}|${call.day}`);
    return {
      ancestorSpentCents: anc.length > 0 && anc.every((id) => keys.has(id)) ? anc.map((id) => keys.get(id)!) : null,
      ancestorDaySpentCents:
        anc.length > 0 && ancDays.every((d) => days.has(d)) ? ancDays.map((d) => days.get(d)!) : null,
      duplicate: u === undefined,
      creditAppliedCents: Number(u?.credit ?? 0),
      billableCents: Number(u?.billable ?? 0),
      org: o ? { creditCents: Number(o.credit), balanceVersion: Number(o.version) } : null,
      key: spent !== undefined && day !== undefined ? { spentCents: spent, daySpentCents: day } : null,
    };
  });
}
